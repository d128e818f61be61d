//! dcsnoop: each dentry cache lookup that failed, and with -a each path
//! component looked up: BCC's TIME(s) PID COMM T FILE lines.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::probe::{self, FunctionHooks};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::c_bytes;
use common::run::lifecycle::{self, attach_all, Setup, SkelOf, Tool};
use common::run::schedule::Schedule;
use libbpf_rs::skel::Skel;
use libbpf_rs::Link;

common::skeleton!("dcsnoop");
use skel::{types, DcsnoopSkelBuilder, OpenDcsnoopSkel};

common::event_record!(types::event, types::task_header);

use types::dc_lookup as L;

/// What BCC hooks: the slow lookup whose failures are traced, and with -a
/// each path component's lookup in the cache; and where the walk has
/// allocated a name the cache lacked since 4.7.
const D_LOOKUP: &str = "d_lookup";
const LOOKUP_FAST: &str = "lookup_fast";
const D_ALLOC_PARALLEL: &str = "d_alloc_parallel";

const EXAMPLES: &str = "\
EXAMPLES:
    dcsnoop              # trace failed dentry cache lookups
    dcsnoop -a           # trace every lookup (a high rate: every path component)
    dcsnoop -T           # a time column (HH:MM:SS) instead of seconds since start
    dcsnoop -p 181 -d 10 # process 181's lookups, for 10 seconds
    dcsnoop --json | jq .";

/// Trace dentry cache (dcache) lookups: those that fail, or all of them.
#[derive(Parser, Debug)]
#[command(name = "dcsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Trace every lookup (each path component), not only the failed ones
    #[arg(short = 'a', long = "all", visible_alias = "trace-all")]
    all: bool,
    /// A time column (HH:MM:SS) instead of seconds since tracing started
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Trace these threads only (comma-separated tids)
    #[arg(short = 't', long, value_parser = cli::id_list)]
    tid: Option<IdList>,
    /// Trace for DURATION seconds (else until Ctrl-C)
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Dcsnoop>();

pub(crate) struct Dcsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Dcsnoop>,
    hooks: FunctionHooks,
}

/// The functions dcsnoop needs: d_lookup and d_alloc_parallel, and
/// lookup_fast with -a.
fn functions(all: bool) -> &'static [&'static str] {
    if all {
        &[LOOKUP_FAST, D_LOOKUP, D_ALLOC_PARALLEL]
    } else {
        &[D_LOOKUP, D_ALLOC_PARALLEL]
    }
}

/// fentry where the kernel allows it on each function, else kprobes; else
/// the error the user reads.
fn choose_hooks(all: bool) -> Result<FunctionHooks> {
    FunctionHooks::choose(functions(all), "the dentry cache")
}

/// True if this kernel lets dcsnoop -a attach (for its tests).
pub fn hooks_present() -> bool {
    choose_hooks(true).is_ok()
}

impl Tool for Dcsnoop {
    common::tool_types!(DcsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Dcsnoop {
            table: table(&args),
            event: Record::new(containers),
            args,
            hooks: FunctionHooks::Fentry,
        })
    }

    fn filters(&self) -> Filters {
        Filters::threads(
            &self.args.pid,
            &self.args.tid,
            "-t",
            self.args.cgroup.path(),
        )
    }

    /// Chosen here, after the arguments and the privileges are checked, so
    /// that those errors come first.
    fn configure(&mut self, open: &mut OpenDcsnoopSkel<'_>, _: &Setup) -> Result<()> {
        self.hooks = choose_hooks(self.args.all)?;
        let fentry = self.hooks == FunctionHooks::Fentry;
        let all = self.args.all;
        let p = &mut open.progs;
        probe::load_when(fentry && all, [&mut p.dc_fentry_fast]);
        probe::load_when(fentry, [&mut p.dc_fexit_lookup, &mut p.dc_fentry_alloc]);
        probe::load_when(!fentry && all, [&mut p.dc_kprobe_fast]);
        probe::load_when(
            !fentry,
            [
                &mut p.dc_kprobe_lookup,
                &mut p.dc_kretprobe_lookup,
                &mut p.dc_kprobe_alloc,
            ],
        );
        Ok(())
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        (program == "dc_kprobe_fast" && self.args.all).then(|| self.hooks.symbol(0))?
    }

    /// lookup_fast's kprobe names no function in its section: attached
    /// here to the symbol found (a compiler's copy, where the kernel has
    /// only that).
    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let mut links = attach_all(skel.object())?;
        if self.args.all {
            links.extend(self.hooks.attach_kprobe(0, &skel.progs.dc_kprobe_fast)?);
        }
        Ok(links)
    }

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Header {
            header: self.table.header(),
            note: "Tracing dentry cache lookups... Hit Ctrl-C to end.".into(),
        }
    }

    common::event_kind!();
}

common::stamped_by_record!(Dcsnoop);

impl Dcsnoop {
    /// BCC's T: M for a miss, R for a reference (-a).
    fn kind(&self) -> &'static str {
        if self.event.r#type == L::DC_REFERENCE.0 {
            "R"
        } else {
            "M"
        }
    }
}

/// BCC's columns: TIME(s) PID COMM T FILE; with -T, the time of day
/// (libbpf-tools' -T); TID in JSON.
fn table(args: &Args) -> Table<Dcsnoop> {
    Table::<Dcsnoop>::new(args.common.json)
        .column(args.timestamp, columns::time())
        .column(!args.timestamp, columns::elapsed::<_, 6>(11))
        .column(args.timestamp, columns::ts())
        .columns([
            columns::pid(7),
            columns::tid(0).json_only(),
            columns::cgroup_id(),
            columns::comm("COMM", 16),
            Column::new("T", 1, "", |t: &Dcsnoop| t.kind().into()),
            Column::json("type", |t: &Dcsnoop| {
                if t.kind() == "R" { "reference" } else { "miss" }.into()
            }),
            Column::new("FILE", 0, "file", |t: &Dcsnoop| {
                Cell::bytes(c_bytes(&t.event.name))
            }),
        ])
        .containers(args.containers.containers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_bccs() {
        let a = Args::try_parse_from(["dcsnoop"]).unwrap();
        assert_eq!(
            table(&a).header(),
            "TIME(s)     PID     COMM             T FILE"
        );
        let a = Args::try_parse_from(["dcsnoop", "-T"]).unwrap();
        assert_eq!(
            table(&a).header(),
            "TIME     PID     COMM             T FILE"
        );
    }

    #[test]
    fn options_parse() {
        let a = Args::try_parse_from(["dcsnoop", "-a", "-p", "3,4", "-t", "5", "-d", "5"]).unwrap();
        assert!(a.all);
        assert_eq!(a.duration, Some(5));
        assert!(
            Args::try_parse_from(["dcsnoop", "--trace-all"])
                .unwrap()
                .all
        );
        assert!(Args::try_parse_from(["dcsnoop", "5"]).is_err());
    }

    #[test]
    fn lookup_kinds_are_bccs() {
        assert_eq!((L::DC_MISS.0, L::DC_REFERENCE.0), (0, 1));
        assert_eq!(functions(false), [D_LOOKUP, D_ALLOC_PARALLEL]);
        assert_eq!(functions(true), [LOOKUP_FAST, D_LOOKUP, D_ALLOC_PARALLEL]);
    }
}
