//! fileslower: synchronous file reads and writes slower than a threshold.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::fileio::{self, Variant, READ, WRITE};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::c_bytes;
use common::run::lifecycle::{self, Setup, Tool};

use libbpf_rs::skel::OpenSkel;

common::skeleton!("fileslower");
use skel::{types, FileslowerSkel, FileslowerSkelBuilder, OpenFileslowerSkel};

common::event_record!(types::slow_event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    fileslower             # reads and writes slower than 10 ms
    fileslower 1           # slower than 1 ms
    fileslower 0           # every read and write (a lot of output)
    fileslower -p 181      # only process 181
    fileslower -a          # sockets, pipes and devices too
    fileslower --json 5 | jq .";

/// Trace synchronous file reads and writes slower than a threshold, on
/// any file system, with the file's name.
#[derive(Parser, Debug)]
#[command(name = "fileslower", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Include sockets, pipes and other non-regular files
    #[arg(short = 'a', long)]
    all_files: bool,
    #[command(flatten)]
    cgroup: CgroupArgs,
    /// Minimum latency to show, in milliseconds (0: every call)
    #[arg(value_name = "MIN_MS", default_value_t = 10)]
    min_ms: u64,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// The VFS functions fileslower times.
const FUNCTIONS: [&str; 2] = ["vfs_read", "vfs_write"];

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Fileslower>();

pub(crate) struct Fileslower {
    args: Args,
    mode: Variant,
    event: Record<types::slow_event>,
    table: Table<Fileslower>,
}

const SYSCALL_NOTE: &str = "system call mode (no fentry or kprobes on vfs_read and vfs_write \
                            here): timed at the read and write system calls, so the latency \
                            includes the system call's own";

impl Tool for Fileslower {
    common::tool_types!(FileslowerSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        let mode = Variant::choose(&FUNCTIONS);
        Ok(Fileslower {
            table: table(args.common.json).containers(containers),
            args,
            mode,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenFileslowerSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.regular_only = !self.args.all_files;
        rodata.current_task_btf = probe::current_task_btf();
        rodata.rdonly_cast = probe::rdonly_cast();
        rodata.min_latency_ns = self.args.min_ms.saturating_mul(1_000_000);
        if self.mode == Variant::Syscalls {
            rodata.tick_ns = fileio::quick_call_tick_ns().unwrap_or(0);
        }
        let mode = self.mode;
        mode.load_its_programs(open.open_object_mut());
        let (p, m) = (&mut open.progs, &mut open.maps);
        mode.slow_syscall_programs(probe::TaskStateVariants {
            btf: vec![&mut p.fs_sys_enter, &mut p.fs_sys_exit],
            raw: vec![&mut p.fs_raw_enter, &mut p.fs_raw_exit],
            storage_maps: vec![&mut m.start_storage],
            hash_maps: vec![&mut m.start],
        })?;
        mode.check(&FUNCTIONS)
    }

    fn degraded(&self) -> Option<String> {
        (self.mode == Variant::Syscalls).then(|| SYSCALL_NOTE.into())
    }

    fn hook_notes(&self) -> Vec<String> {
        (self.mode == Variant::Syscalls)
            .then(|| fileio::quick_calls_note(self.args.min_ms.saturating_mul(1_000_000)))
            .into_iter()
            .collect()
    }

    fn loaded(&mut self, skel: &mut FileslowerSkel<'_>) -> Result<()> {
        if self.mode == Variant::Syscalls {
            fileio::fill(&skel.maps.file_ops, &[READ, WRITE])?;
        }
        Ok(())
    }

    common::event_kind!();
}

common::stamped_by_record!(Fileslower);

fn op(e: &types::slow_event) -> &'static str {
    match e.op {
        READ => "R",
        WRITE => "W",
        _ => "?",
    }
}

/// BCC's columns: TIME(s) COMM TID D BYTES LAT(ms) FILENAME.
fn table(json: bool) -> Table<Fileslower> {
    Table::<Fileslower>::new(json).columns([
        columns::elapsed::<_, 3>(8),
        columns::comm("COMM", 16),
        columns::tid(7),
        columns::pid(0).json_only(),
        columns::cgroup_id(),
        Column::new("D", 1, "op", |t| op(&t.event).into()),
        Column::new("BYTES", 7, "bytes", |t| t.event.ret.into()),
        Column::json("offset", |t| t.event.offset.into()),
        Column::right("LAT(ms)", 7, "latency_ms", |t| {
            Cell::Float(t.event.latency_ns as f64 / 1e6, 2)
        }),
        Column::json("type", |t| fileio::type_name(t.event.r#type).into()),
        Column::new("FILENAME", 0, "file", |t| {
            Cell::bytes(c_bytes(&t.event.name))
        }),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        assert_eq!(Args::try_parse_from(["fileslower"]).unwrap().min_ms, 10);
    }
}
