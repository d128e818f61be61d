//! biosnoop: one line per block I/O, with the process that submitted it.

mod info;

use std::io;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::disks;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::Out;
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("biosnoop");
use skel::{types, BiosnoopSkelBuilder, OpenBiosnoopSkel};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    biosnoop              # trace all block I/O
    biosnoop -Q           # include OS queued time (QUE column)
    biosnoop -d sdc       # trace sdc only
    biosnoop -p 181       # only I/O submitted by process 181
    biosnoop -m 10        # only I/O slower than 10 ms
    biosnoop -P           # show whether each I/O is sequential or random
    biosnoop -T           # wall-clock time instead of seconds
    biosnoop 10           # trace for 10 seconds only
    biosnoop -c /sys/fs/cgroup/system.slice  # only I/O from this cgroup v2
    biosnoop --json | jq .";

/// Trace block device I/O: one line per completed request, with the
/// process that submitted it, the disk, op, sector, size and latency.
#[derive(Parser, Debug)]
#[command(name = "biosnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include OS queued time: a QUE(ms) column, from submission to issue
    #[arg(short = 'Q', long, alias = "queue")]
    queued: bool,
    /// Trace this disk only (e.g. sda)
    #[arg(short = 'd', long, value_name = "DISK")]
    disk: Option<String>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    /// Trace I/O submitted by these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only I/O whose latency (issue to completion) is at least this many ms
    #[arg(short = 'm', long, value_name = "MIN_MS")]
    min_ms: Option<u64>,
    /// Show the I/O pattern: S sequential (starts where the disk's last
    /// I/O ended), R random
    #[arg(short = 'P', long)]
    pattern: bool,
    /// TIME(s) from the start of tracing (default: from the first I/O)
    #[arg(short = 't', long, conflicts_with = "time")]
    timestamp: bool,
    /// A wall-clock TIME column (HH:MM:SS) instead of TIME(s)
    #[arg(short = 'T', long)]
    time: bool,
    /// Trace for this many seconds, then exit
    #[arg(value_name = "DURATION", value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Biosnoop>();

pub(crate) struct Biosnoop {
    args: Args,
    targ_dev: Option<u32>,
    /// The header's time is the completion: TIME(s) counts from the first
    /// I/O's (BCC's).
    event: Record<types::event>,
    disks: disks::Names,
    table: Table<Biosnoop>,
}

impl Tool for Biosnoop {
    common::tool_types!(BiosnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        let targ_dev = args.disk.as_deref().map(disks::resolve).transpose()?;
        Ok(Biosnoop {
            table: table(&args).containers(containers),
            args,
            targ_dev,
            event: Record::new(containers),
            disks: disks::Names::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            disk: self.targ_dev,
            ..Filters::processes(&self.args.pid, self.args.cgroup.path())
        }
    }

    fn configure(&mut self, open: &mut OpenBiosnoopSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.min_latency_ns = self.args.min_ms.unwrap_or(0).saturating_mul(1_000_000);
        rodata.pattern = self.args.pattern;
        common::choose_block_request_programs!(open.progs)?;
        Ok(())
    }

    common::event_kind!(table);

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        self.disks.learn(self.event.dev);
        self.table.row(out, self)
    }
}

common::stamped_by_record!(Biosnoop);

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn pattern(p: u32) -> &'static str {
    use types::io_pattern as P;
    match p {
        x if x == P::PATTERN_SEQUENTIAL.0 => "S",
        x if x == P::PATTERN_RANDOM.0 => "R",
        _ => "?",
    }
}

/// BCC's columns: TIME(s) COMM PID DISK T SECTOR BYTES [P] [QUE(ms)] LAT(ms).
fn table(args: &Args) -> Table<Biosnoop> {
    // TIME and TIME(s) are never both shown (-t conflicts with -T).
    let table = Table::<Biosnoop>::new(args.common.json).column(args.time, columns::time());
    // TIME(s): with -t from the start of tracing (JSON ts), else from the
    // first I/O (text only, JSON still has ts).
    let table = if args.timestamp {
        table.column(!args.time, columns::elapsed::<_, 6>(11))
    } else {
        table
            .column(!args.time, columns::since_first::<_, 6>(11))
            .column(false, columns::ts())
    };
    table
        .columns([
            columns::comm("COMM", 16),
            columns::pid(7),
            columns::tid(0).json_only(),
            columns::cgroup_id(),
            Column::new("DISK", 9, "disk", |t| t.disks.of(t.event.dev).into()),
            Column::new("T", 1, "op", |t| disks::op_letter(t.event.op).into()),
            Column::new("SECTOR", 10, "sector", |t| t.event.sector.into()),
            Column::new("BYTES", 7, "bytes", |t| t.event.bytes.into()),
        ])
        .column(
            args.pattern,
            Column::new("P", 1, "pattern", |t| pattern(t.event.pattern).into()),
        )
        .column(
            args.queued,
            Column::right("QUE(ms)", 7, "queue_ms", |t| {
                Cell::Float(ms(t.event.queue_ns), 2)
            }),
        )
        .columns([Column::right("LAT(ms)", 7, "latency_ms", |t| {
            Cell::Float(ms(t.event.latency_ns), 2)
        })])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        let ok = Args::try_parse_from(["biosnoop", "-QP", "-m", "5", "3"]).unwrap();
        assert_eq!((ok.min_ms, ok.duration), (Some(5), Some(3)));
    }

    #[test]
    fn columns_are_bccs() {
        let args = Args::try_parse_from(["biosnoop", "-Q"]).unwrap();
        let words: Vec<String> = table(&args)
            .header()
            .split_whitespace()
            .map(String::from)
            .collect();
        assert_eq!(
            words,
            ["TIME(s)", "COMM", "PID", "DISK", "T", "SECTOR", "BYTES", "QUE(ms)", "LAT(ms)"]
        );
    }
}
