//! drsnoop: each reclaim a task runs itself, in BCC's layout: who stalled
//! in direct reclaim (the page allocator short of free memory), for how
//! long, and how many pages it freed; and, beyond BCC, the reclaims a
//! memory cgroup at its memory.high or memory.max makes its tasks run.

mod info;

use std::io;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::probe;
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::{self, Out};
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("drsnoop");
use skel::{types, DrsnoopSkelBuilder, OpenDrsnoopSkel};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    drsnoop               # trace every direct and memory cgroup reclaim
    drsnoop -T            # with a timestamp column
    drsnoop -U            # with a UID column
    drsnoop -p 181        # only process 181
    drsnoop -t 123        # only thread 123
    drsnoop -u 1000       # only uid 1000 (or a user name)
    drsnoop -d 10         # trace for 10 seconds
    drsnoop -n main       # only process names containing \"main\"
    drsnoop -e            # with the free memory (FREE(KB))
    drsnoop --direct      # direct reclaim only, as BCC's drsnoop
    drsnoop --containers  # with each task's container
    drsnoop --json | jq .";

/// Trace direct reclaim and memory cgroup reclaim: each reclaim a task
/// runs, its latency and the pages it freed.
#[derive(Parser, Debug)]
#[command(name = "drsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a TIME(s) column: seconds since the first reclaim shown
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Include a UID column
    #[arg(short = 'U', long)]
    print_uid: bool,
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only these threads (comma-separated tids); the PID column is then TID
    #[arg(short = 't', long, value_parser = cli::id_list, conflicts_with = "pid")]
    tid: Option<IdList>,
    /// Only this uid (or user name)
    #[arg(short = 'u', long, value_parser = cli::uid)]
    uid: Option<u32>,
    /// Trace for this many seconds
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = cli::seconds)]
    duration: Option<u64>,
    /// Only process names (comm) containing this text
    #[arg(short = 'n', long, value_parser = cli::non_empty)]
    name: Option<String>,
    /// Include a FREE(KB) column: the free memory as each line is printed
    #[arg(short = 'e', long)]
    extended: bool,
    /// Direct reclaim only (BCC's and libbpf-tools' drsnoop); else memory
    /// cgroup reclaim too
    #[arg(long)]
    direct: bool,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Drsnoop>();

pub(crate) struct Drsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Drsnoop>,
    /// No memory cgroup reclaim tracepoints (a kernel without memcg).
    no_memcg: bool,
    /// The free memory (KiB) as the current line is printed, with -e.
    free_kb: Option<u64>,
}

impl Tool for Drsnoop {
    common::tool_types!(DrsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Drsnoop {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
            no_memcg: false,
            free_kb: None,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            uid: self.args.uid,
            ..Filters::threads(
                &self.args.pid,
                &self.args.tid,
                "-t",
                self.args.cgroup.path(),
            )
        }
    }

    fn configure(&mut self, open: &mut OpenDrsnoopSkel<'_>, _: &Setup) -> Result<()> {
        let direct = probe::tracepoint_hook("vmscan", "mm_vmscan_direct_reclaim_begin", "2.6.36")?;
        let p = &mut open.progs;
        probe::entry_exit_variant(
            direct,
            [&mut p.direct_begin_btf, &mut p.direct_end_btf],
            [&mut p.direct_begin_raw, &mut p.direct_end_raw],
            [&mut p.direct_begin_tp, &mut p.direct_end_tp],
            false,
        );
        let memcg = if self.args.direct {
            None
        } else {
            probe::tracepoint_hook("vmscan", "mm_vmscan_memcg_reclaim_begin", "2.6.36").ok()
        };
        self.no_memcg = !self.args.direct && memcg.is_none();
        match memcg {
            Some(hook) => probe::entry_exit_variant(
                hook,
                [&mut p.memcg_begin_btf, &mut p.memcg_end_btf],
                [&mut p.memcg_begin_raw, &mut p.memcg_end_raw],
                [&mut p.memcg_begin_tp, &mut p.memcg_end_tp],
                false,
            ),
            None => probe::load_when(
                false,
                [
                    &mut p.memcg_begin_btf,
                    &mut p.memcg_end_btf,
                    &mut p.memcg_begin_raw,
                    &mut p.memcg_end_raw,
                    &mut p.memcg_begin_tp,
                    &mut p.memcg_end_tp,
                ],
            ),
        }
        Ok(())
    }

    fn degraded(&self) -> Option<String> {
        self.no_memcg.then(|| {
            "no memory cgroup reclaim tracepoints (a kernel without CONFIG_MEMCG): \
             direct reclaim only"
                .into()
        })
    }

    common::event_kind!(table);

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        if !output::comm_holds(&self.event.task.comm, self.args.name.as_deref()) {
            return Ok(());
        }
        if self.args.extended {
            self.free_kb = free_kb();
        }
        self.table.row(out, self)
    }
}

common::stamped_by_record!(Drsnoop);

impl Drsnoop {
    fn kind(&self) -> &'static str {
        match types::reclaim_kind(self.event.kind) {
            types::reclaim_kind::RECLAIM_MEMCG => "memcg",
            _ => "direct",
        }
    }
}

/// The free memory now, in KiB (/proc/vmstat's nr_free_pages).
fn free_kb() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/vmstat").ok()?;
    let pages: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("nr_free_pages "))?
        .trim()
        .parse()
        .ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    Some(pages * page / 1024)
}

/// BCC's `COMM PID LAT(ms) PAGES` (TIME(s) and UID first with -T and -U;
/// TID for PID with -t; FREE(KB) with -e), and the reclaim's kind.
fn table(args: &Args) -> Table<Drsnoop> {
    let (id, other) = if args.tid.is_some() {
        (columns::tid(6), columns::pid(0).json_only())
    } else {
        (columns::pid(6), columns::tid(0).json_only())
    };
    Table::<Drsnoop>::new(args.common.json)
        .column(args.timestamp, columns::since_first::<Drsnoop, 9>(14))
        .column(
            args.print_uid,
            Column::new("UID", 6, "uid", |t: &Drsnoop| t.event.uid.into()),
        )
        .columns([
            columns::ts(),
            columns::comm("COMM", 14),
            id,
            other,
            columns::cgroup_id(),
            Column::right("LAT(ms)", 8, "", |t: &Drsnoop| {
                Cell::Float(t.event.latency_ns as f64 / 1e6, 2)
            }),
            Column::json("latency_ns", |t: &Drsnoop| t.event.latency_ns.into()),
            Column::right("PAGES", 5, "pages", |t: &Drsnoop| {
                t.event.nr_reclaimed.into()
            }),
        ])
        .column(
            args.extended,
            Column::right("FREE(KB)", 10, "free_kb", |t: &Drsnoop| {
                t.free_kb.map_or(Cell::Null, Cell::from)
            })
            .optional(),
        )
        .columns([
            Column::json("order", |t: &Drsnoop| i64::from(t.event.order).into()),
            Column::json("gfp_flags", |t: &Drsnoop| t.event.gfp_flags.into()),
            Column::new("TYPE", 0, "type", |t: &Drsnoop| t.kind().into()),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_bccs_and_the_type() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(h(&["drsnoop"]), "COMM           PID     LAT(ms) PAGES TYPE");
        assert_eq!(
            h(&["drsnoop", "-T", "-U", "-t", "7", "-e"]),
            "TIME(s)        UID    COMM           TID     LAT(ms) PAGES   FREE(KB) TYPE"
        );
    }

    #[test]
    fn options_parse() {
        let a = Args::try_parse_from(["drsnoop", "-p", "3,4", "-d", "5", "-n", "x", "--direct"])
            .unwrap();
        assert!(a.direct && a.duration == Some(5));
        assert!(Args::try_parse_from(["drsnoop", "-p", "1", "-t", "1"]).is_err());
        assert!(Args::try_parse_from(["drsnoop", "-d", "0"]).is_err());
        assert!(Args::try_parse_from(["drsnoop", "5"]).is_err());
    }

    #[test]
    fn free_memory_is_read() {
        assert!(free_kb().is_some_and(|kb| kb > 0));
    }
}
