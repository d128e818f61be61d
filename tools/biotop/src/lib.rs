//! biotop: top for disks, block I/O by submitting process each interval.

mod info;

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use common::cli::{self, CommonArgs, IdList, TopArgs};
use common::kernel::disks;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kinds::event::{Cell, Column, Table};
use common::output::top::Screen;
use common::output::{self, c_bytes, Out};
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool, When};

common::skeleton!("biotop");
use skel::{types, BiotopSkel, BiotopSkelBuilder, OpenBiotopSkel};

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
    /// Trace I/O submitted from this cgroup v2 (directory path) only
    #[arg(short = 'c', long, value_name = "PATH", value_parser = cli::cgroup_path)]
    cgroup: Option<PathBuf>,
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

/// One table row: who, where, how much.
#[derive(Default)]
struct Row {
    key: types::who_key,
    total: types::io_total,
    time: String,
}

impl Row {
    fn avg_ms(&self) -> f64 {
        self.total.latency_ns as f64 / 1e6 / self.total.ios.max(1) as f64
    }
}

pub(crate) struct Biotop {
    args: Args,
    targ_dev: Option<u32>,
    screen: Screen,
    row: Row,
    disks: disks::Names,
    table: Table<Biotop>,
}

impl Tool for Biotop {
    type Args = Args;
    type Builder = BiotopSkelBuilder;
    const INFO: &'static registry::ToolInfo = &info::INFO;

    fn new(args: Args) -> Result<Self> {
        let targ_dev = args.disk.as_deref().map(disks::resolve).transpose()?;
        Ok(Biotop {
            table: table(args.common.json),
            screen: Screen::new(args.top.noclear, args.common.json),
            args,
            targ_dev,
            row: Row::default(),
            disks: disks::Names::default(),
        })
    }

    fn common(&self) -> &CommonArgs {
        &self.args.common
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, &self.args.cgroup)
    }

    fn configure(&mut self, open: &mut OpenBiotopSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.filter_dev = self.targ_dev.is_some();
        rodata.targ_dev = self.targ_dev.unwrap_or(0);
        common::choose_block_request_programs!(open.progs)?;
        Ok(())
    }

    fn banner(&self) -> Banner {
        Banner::Note(self.args.top.banner())
    }

    fn schedule(&self) -> Schedule {
        Schedule::from(&self.args.top.every)
    }

    /// Every interval, and the part interval at the end: the totals the
    /// kernel summed since the last report, drained.
    fn report(&mut self, skel: &BiotopSkel<'_>, out: &mut Out, _: When) -> Result<()> {
        let mut rows: Vec<(types::who_key, Box<types::io_total>)> =
            maps::read_as(&skel.maps.totals, true)?;
        sort(&mut rows, self.args.sort);
        let time = output::now_hms();
        self.screen.begin(out, &time, &self.table.header())?;
        for (key, total) in rows.into_iter().take(self.args.top.rows as usize) {
            self.disks.learn(key.dev);
            self.row = Row {
                key,
                total: *total,
                time: time.clone(),
            };
            self.table.row(out, self)?;
        }
        out.flush()?;
        Ok(())
    }
}

/// BCC's order within a sort key: the largest first.
fn sort(rows: &mut [(types::who_key, Box<types::io_total>)], by: Sort) {
    let avg = |t: &types::io_total| t.latency_ns / t.ios.max(1);
    rows.sort_by(|(_, a), (_, b)| {
        let (a, b) = (&**a, &**b);
        match by {
            Sort::All => (b.ios, b.bytes, avg(b)).cmp(&(a.ios, a.bytes, avg(a))),
            Sort::Io => b.ios.cmp(&a.ios),
            Sort::Kbytes => b.bytes.cmp(&a.bytes),
            Sort::Avg => avg(b).cmp(&avg(a)),
        }
    });
}

/// BCC's columns: PID COMM D MAJ MIN DISK I/O Kbytes AVGms.
fn table(json: bool) -> Table<Biotop> {
    use common::kernel::disks::{major, minor};
    Table::<Biotop>::new(json)
        .column(false, Column::json("time", |t| t.row.time.as_str().into()))
        .columns([
            Column::new("PID", 7, "pid", |t| t.row.key.pid.into()),
            Column::new("COMM", 16, "comm", |t| {
                Cell::bytes(c_bytes(&t.row.key.comm))
            }),
            Column::new("D", 1, "op", |t| disks::op_letter(t.row.key.op).into()),
            Column::new("MAJ", 3, "major", |t| major(t.row.key.dev).into()),
            Column::new("MIN", 3, "minor", |t| minor(t.row.key.dev).into()),
            Column::new("DISK", 8, "disk", |t| t.disks.of(t.row.key.dev).into()),
            Column::right("I/O", 5, "io", |t| t.row.total.ios.into()),
            Column::right("Kbytes", 7, "kbytes", |t| (t.row.total.bytes / 1024).into()),
            Column::right("AVGms", 6, "avg_ms", |t| Cell::Float(t.row.avg_ms(), 2)),
        ])
        .column(false, Column::json("bytes", |t| t.row.total.bytes.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked() {
        testkit::check_arguments::<Args>(&[
            &["biotop", "0"][..],
            &["biotop", "1", "0"],
            &["biotop", "-r", "0"],
            &["biotop", "-s", "size"],
            &["biotop", "-p", "x"],
        ]);
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

    fn total(ios: u64, bytes: u64, latency_ns: u64) -> (types::who_key, Box<types::io_total>) {
        let t = types::io_total {
            ios,
            bytes,
            latency_ns,
        };
        (types::who_key::default(), Box::new(t))
    }

    #[test]
    fn sorts_largest_first() {
        let mut rows = vec![total(1, 900, 9), total(5, 100, 5), total(5, 200, 50)];
        sort(&mut rows, Sort::All);
        assert_eq!(
            rows.iter().map(|r| r.1.bytes).collect::<Vec<_>>(),
            [200, 100, 900]
        );
        sort(&mut rows, Sort::Kbytes);
        assert_eq!(rows[0].1.bytes, 900);
        sort(&mut rows, Sort::Avg);
        assert_eq!(rows[0].1.latency_ns, 50);
    }
}
