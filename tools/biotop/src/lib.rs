//! biotop: top for disks, block I/O by submitting process each interval.

mod info;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList, TopArgs};
use common::kernel::disks;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, Timed};
use common::output::c_bytes;
use common::run::lifecycle::{self, Setup, SkelOf, Tool, When};

common::skeleton!("biotop");
use skel::{types, BiotopSkelBuilder, OpenBiotopSkel};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::who_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::io_total {}

const EXAMPLES: &str = "\
EXAMPLES:
    biotop            # block device I/O top, 1 second refresh
    biotop -C         # don't clear the screen
    biotop -p 181     # only I/O submitted by process 181
    biotop -r 5       # at most 5 rows
    biotop -s avg     # sort by average latency
    biotop -d sda     # only disk sda
    biotop 5          # 5 second summaries
    biotop 5 10       # 5 second summaries, 10 times only
    biotop --json 1 3 | jq .";

/// Block device I/O top: I/O count, Kbytes and average latency per
/// submitting process, disk and op, each interval.
#[derive(Parser, Debug)]
#[command(name = "biotop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Sort by: all (I/O, then Kbytes, then average), io, kbytes, avg
    #[arg(short = 's', long, value_enum, default_value_t = Sort::All)]
    sort: Sort,
    /// Trace I/O submitted by these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Trace this disk only (e.g. sda)
    #[arg(short = 'd', long, value_name = "DISK")]
    disk: Option<String>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    top: TopArgs,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Sort {
    All,
    #[value(alias = "I/O", alias = "i/o")]
    Io,
    #[value(alias = "bytes", alias = "Kbytes")]
    Kbytes,
    #[value(alias = "time", alias = "AVGms", alias = "avgms")]
    Avg,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Biotop>();

/// One table row: who, where (the disk's name as `extra`), how much.
type Row = table::Entry<types::who_key, types::io_total, String>;

fn avg_ms(t: &types::io_total) -> f64 {
    t.latency_ns as f64 / 1e6 / t.ios.max(1) as f64
}

pub(crate) struct Biotop {
    args: Args,
    targ_dev: Option<u32>,
    disks: disks::Names,
    cgroups: table::Cgroups,
    table: Table<Timed<Row>>,
}

impl Tool for Biotop {
    common::tool_types!(BiotopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let targ_dev = args.disk.as_deref().map(disks::resolve).transpose()?;
        Ok(Biotop {
            table: table(args.common.json).containers(args.containers.containers),
            cgroups: table::Cgroups::new(args.containers.containers),
            args,
            targ_dev,
            disks: disks::Names::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            disk: self.targ_dev,
            ..Filters::processes(&self.args.pid, self.args.cgroup.path())
        }
    }

    fn configure(&mut self, open: &mut OpenBiotopSkel<'_>, _: &Setup) -> Result<()> {
        common::choose_block_request_programs!(open.progs)?;
        Ok(())
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        Some(table::Spec::top(
            &self.args.top,
            self.args.common.json,
            true,
        ))
    }

    /// The totals the kernel summed since the last report, drained.
    fn interval_rows<'s>(
        &'s mut self,
        skel: &SkelOf<'_, Self>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let totals: Vec<(types::who_key, Box<types::io_total>)> =
            maps::read_as(&skel.maps.totals, true)?;
        let mut rows = self.cgroups.entries(totals, |_, t| t.cgroup_id);
        for row in &mut rows {
            self.disks.learn(row.key.dev);
            row.extra = self.disks.of(row.key.dev).to_owned();
        }
        let by = self.args.sort;
        Ok(Box::new(table::Rows::new(
            rows,
            &self.table,
            move |a, b| order(b, by).cmp(&order(a, by)),
        )))
    }
}

/// What BCC sorts by, largest first.
fn order(r: &Row, by: Sort) -> (u64, u64, u64) {
    let t = &r.value;
    let avg = t.latency_ns / t.ios.max(1);
    match by {
        Sort::All => (t.ios, t.bytes, avg),
        Sort::Io => (t.ios, 0, 0),
        Sort::Kbytes => (t.bytes, 0, 0),
        Sort::Avg => (avg, 0, 0),
    }
}

/// BCC's columns: PID COMM D MAJ MIN DISK I/O Kbytes AVGms.
fn table(json: bool) -> Table<Timed<Row>> {
    use common::kernel::disks::{major, minor};
    table::top_table::<Row>(json)
        .columns([
            Column::new("PID", 7, "pid", |t| t.row.key.pid.into()),
            Column::new("COMM", 16, "comm", |t| {
                Cell::bytes(c_bytes(&t.row.key.comm))
            }),
            Column::new("D", 1, "op", |t| disks::op_letter(t.row.key.op).into()),
            Column::new("MAJ", 3, "major", |t| major(t.row.key.dev).into()),
            Column::new("MIN", 3, "minor", |t| minor(t.row.key.dev).into()),
            Column::new("DISK", 8, "disk", |t| t.row.extra.as_str().into()),
            Column::right("I/O", 5, "io", |t| t.row.value.ios.into()),
            Column::right("Kbytes", 7, "kbytes", |t| (t.row.value.bytes / 1024).into()),
            Column::right("AVGms", 6, "avg_ms", |t| {
                Cell::Float(avg_ms(&t.row.value), 2)
            }),
        ])
        .column(false, Column::json("bytes", |t| t.row.value.bytes.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        let ok = Args::try_parse_from(["biotop", "-C", "-s", "i/o", "5", "2"]).unwrap();
        assert_eq!(
            (ok.sort, ok.top.every.interval, ok.top.every.count),
            (Sort::Io, 5, Some(2))
        );
        assert_eq!(
            Args::try_parse_from(["biotop"]).unwrap().top.every.interval,
            1
        );
    }

    fn total(ios: u64, bytes: u64, latency_ns: u64) -> Row {
        Row {
            key: types::who_key::default(),
            value: types::io_total {
                cgroup_id: 0,
                ios,
                bytes,
                latency_ns,
            },
            extra: String::new(),
            cgroup: table::Cgroup::default(),
        }
    }

    #[test]
    fn sorts_largest_first() {
        let rows = [total(1, 900, 9), total(5, 100, 5), total(5, 200, 50)];
        let first = |by| rows.iter().max_by_key(|r| order(r, by)).unwrap();
        assert_eq!(first(Sort::All).value.bytes, 200);
        assert_eq!(first(Sort::Kbytes).value.bytes, 900);
        assert_eq!(first(Sort::Avg).value.latency_ns, 50);
        assert_eq!(order(&rows[1], Sort::All), (5, 100, 1));
    }
}
