//! runqslower: each time a task waited on a run queue longer than a
//! threshold (default 10 ms), one line: the task, its wait, and with -P the
//! task it took the CPU from.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{columns, Cell, Column, Record, Stamped, Table};
use common::output::c_bytes;
use common::run::lifecycle::{self, Setup, Tool};

use libbpf_rs::skel::OpenSkel;

common::skeleton!("runqslower");
use skel::{types, OpenRunqslowerSkel, RunqslowerSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    runqslower           # waits longer than 10000 us (default)
    runqslower 1000      # waits longer than 1000 us
    runqslower -p 123    # process 123's threads only
    runqslower -t 123    # thread 123 only
    runqslower -P        # also the task each took the CPU from
    runqslower --json | jq .";

/// Trace run queue (scheduler) waits longer than a threshold.
#[derive(Parser, Debug)]
#[command(name = "runqslower", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// The shortest wait shown, in microseconds
    #[arg(value_name = "MIN_US", default_value_t = 10_000)]
    min_us: u64,
    /// Also show the task each one took the CPU from
    #[arg(short = 'P', long)]
    previous: bool,
    /// Only these processes' threads (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list, conflicts_with = "tid")]
    pid: Option<IdList>,
    /// Only these threads (comma-separated tids)
    #[arg(short = 't', long, value_parser = cli::id_list)]
    tid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Runqslower>();

pub(crate) struct Runqslower {
    args: Args,
    event: Record<types::event>,
    table: Table<Runqslower>,
    cgroup_id: u64,
}

impl Tool for Runqslower {
    common::tool_types!(RunqslowerSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        // The waiting task's cgroup is judged in the kernel (another task
        // than the current one).
        let cgroup_id = args.cgroup.id()?;
        Ok(Runqslower {
            table: table(&args).containers(containers),
            event: Record::new(containers),
            args,
            cgroup_id,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            tids: self.args.tid.as_ref().map(|l| l.0.clone()),
            thread_option: Some("-t"),
            ..Filters::pids(&self.args.pid)
        }
    }

    fn configure(&mut self, open: &mut OpenRunqslowerSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.min_us = self.args.min_us;
        rodata.targ_cgroup_id = self.cgroup_id;
        probe::task_state_sections(open.open_object_mut())?;
        Ok(())
    }

    fn banner(&self) -> lifecycle::Banner {
        let header = self.table.header();
        lifecycle::Banner::Header {
            header,
            note: format!(
                "Tracing run queue latency higher than {} us",
                self.args.min_us
            ),
        }
    }

    common::event_kind!();
}

common::stamped_by_record!(Runqslower);

/// BCC's columns: TIME COMM TID LAT(us), and with -P PREV COMM PREV TID.
fn table(args: &Args) -> Table<Runqslower> {
    Table::<Runqslower>::new(args.common.json)
        .columns([
            Column::new("TIME", 8, "time", |t: &Runqslower| t.stamps().hms().into()),
            columns::ts(),
            columns::pid(0).json_only(),
            columns::cgroup_id(),
            columns::comm("COMM", 16),
            columns::tid(6),
            Column::right("LAT(us)", 14, "latency_us", |t| t.event.latency_us.into()),
            Column::json("cpu", |t| t.event.cpu.into()),
        ])
        .column(
            args.previous,
            Column::new("PREV COMM", 16, "prev_comm", |t: &Runqslower| {
                Cell::bytes(c_bytes(&t.event.prev_comm))
            }),
        )
        .column(
            args.previous,
            Column::new("PREV TID", 0, "prev_tid", |t| t.event.prev_tid.into()),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_bccs() {
        let args = Args::try_parse_from(["runqslower"]).unwrap();
        assert_eq!(args.min_us, 10_000);
        assert_eq!(
            table(&args).header(),
            "TIME     COMM             TID           LAT(us)"
        );
        let args = Args::try_parse_from(["runqslower", "-P", "1000"]).unwrap();
        assert_eq!(args.min_us, 1000);
        assert_eq!(
            table(&args).header(),
            "TIME     COMM             TID           LAT(us) PREV COMM        PREV TID"
        );
    }
}
