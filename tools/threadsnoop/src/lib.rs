//! threadsnoop: each new thread, with the process that made it and the
//! function it starts in: which programs make threads, how often, to run
//! what. Every thread the kernel makes is seen (task_newtask), however it
//! was made; the start function where the creator called pthread_create()
//! in the system's libc (a uprobe), as BCC's tool shows it.

mod info;

use std::io;
use std::path::PathBuf;
use std::rc::Rc;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::probe::{self, load_when};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::Out;
use common::probes::{elf, Pattern};
use common::run::lifecycle::{self, attach_all, Schedule, Setup, SkelOf, Tool};
use common::sym::{Frame, Symbolizer};
use libbpf_rs::skel::Skel;
use libbpf_rs::{Link, UprobeOpts};

common::skeleton!("threadsnoop");
use skel::{types, OpenThreadsnoopSkel, ThreadsnoopSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    threadsnoop           # trace every new thread
    threadsnoop -p 181    # only threads process 181 makes
    threadsnoop -d 10     # trace for 10 seconds
    threadsnoop --json | jq .";

/// Trace new threads: the process that makes each, the new thread's id,
/// and the function it starts in (where it was made by pthread_create()).
#[derive(Parser, Debug)]
#[command(name = "threadsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only threads these processes make (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Trace for this many seconds
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Threadsnoop>();

pub(crate) struct Threadsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Threadsnoop>,
    /// pthread_create's file (libpthread before glibc 2.34, else libc)
    /// and offset, where found.
    creator: Option<(PathBuf, u64)>,
    symbolizer: Symbolizer,
    /// The current event's start function, where known.
    func: Option<Rc<Frame>>,
}

/// pthread_create in the system's thread library: libpthread's where it
/// has it (glibc before 2.34), else libc's.
fn find_pthread_create() -> Option<(PathBuf, u64)> {
    let pattern = Pattern::new("pthread_create", false).ok()?;
    ["pthread", "c"].iter().find_map(|lib| {
        let path = elf::resolve(lib, None).ok()?;
        let found = elf::functions(&path, &pattern).ok()?;
        found.first().map(|f| (path, f.offset))
    })
}

impl Tool for Threadsnoop {
    common::tool_types!(ThreadsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Threadsnoop {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
            creator: find_pthread_create(),
            symbolizer: Symbolizer::with_source_lines(false),
            func: None,
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenThreadsnoopSkel<'_>, _: &Setup) -> Result<()> {
        let hook = probe::tracepoint_hook("task", "task_newtask", "3.19")?;
        let p = &mut open.progs;
        probe::hook_variant(hook, &mut p.new_btf, &mut p.new_raw, &mut p.new_tp);
        load_when(self.creator.is_some(), [&mut p.thread_create]);
        Ok(())
    }

    fn loaded(&mut self, _: &mut SkelOf<'_, Self>) -> Result<()> {
        // A process that exits before its thread's line is read is still
        // symbolized, from the kernel's records of its mappings.
        if self.creator.is_some() {
            self.symbolizer.follow_mappings();
            // What the side band cannot know: the maps of the processes -p
            // names, made before it started (such a process may exit before
            // its last lines are read).
            for pid in self.args.pid.iter().flat_map(|p| p.0.iter()) {
                self.symbolizer.keep_process(*pid);
            }
        }
        Ok(())
    }

    fn degraded(&self) -> Option<String> {
        self.creator.is_none().then(|| {
            "no pthread_create found in the system's libc or libpthread: \
             threads are shown without their start function"
                .into()
        })
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        let (path, _) = self.creator.as_ref()?;
        (program == "thread_create").then(|| format!("{}:pthread_create", path.display()))
    }

    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let mut links = attach_all(skel.object())?;
        if let Some((path, offset)) = &self.creator {
            // Every process that maps the library (pid -1).
            links.push(
                skel.progs
                    .thread_create
                    .attach_uprobe_with_opts(-1, path, *offset as usize, UprobeOpts::default())
                    .map_err(|e| {
                        anyhow::anyhow!(
                            "attaching a uprobe to {}:pthread_create: {e}",
                            path.display()
                        )
                    })?,
            );
        }
        Ok(links)
    }

    common::event_kind!(table);

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        let (pid, start) = (self.event.task.pid, self.event.start);
        self.func = (start != 0)
            .then(|| self.symbolizer.user(pid, &[start]).into_iter().next())
            .flatten();
        self.table.row(out, self)
    }
}

common::stamped_by_record!(Threadsnoop);

/// BCC's `TIME(ms) PID COMM FUNC`, with the new thread's TID; FUNC `-`
/// where the thread was not made by pthread_create() (Go's runtime, a
/// raw clone()), its address where it has no symbol.
fn table(args: &Args) -> Table<Threadsnoop> {
    Table::<Threadsnoop>::new(args.common.json).columns([
        Column::new("TIME(ms)", 10, "", |t: &Threadsnoop| {
            Cell::Uint((t.event.stamps().since_first() * 1000.0) as u64)
        }),
        columns::ts(),
        columns::pid(7),
        Column::new("TID", 7, "new_tid", |t: &Threadsnoop| {
            t.event.new_tid.into()
        }),
        columns::tid(0).json_only(),
        columns::cgroup_id(),
        columns::comm("COMM", 16),
        // A symbol is the traced program's: escaped, as its other names.
        Column::new("FUNC", 0, "func", |t: &Threadsnoop| match &t.func {
            Some(f) => f.name.as_deref().map_or_else(
                || format!("{:#x}", t.event.start).into(),
                |n| Cell::bytes(n.as_bytes()),
            ),
            None => Cell::Null,
        }),
        Column::json("start", |t: &Threadsnoop| match t.event.start {
            0 => Cell::Null,
            a => format!("{a:#x}").into(),
        }),
        Column::json("clone_flags", |t: &Threadsnoop| t.event.clone_flags.into()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_bccs_with_the_new_thread() {
        let t = table(&Args::try_parse_from(["threadsnoop"]).unwrap());
        assert_eq!(
            t.header(),
            "TIME(ms)   PID     TID     COMM             FUNC"
        );
    }

    #[test]
    fn pthread_create_is_found() {
        let (path, offset) = find_pthread_create().expect("pthread_create in libc");
        assert!(path.to_string_lossy().contains("lib"), "{path:?}");
        assert!(offset > 0);
    }
}
