//! writeback: each round of the kernel's writeback of dirty pages, one
//! line: the device, how many pages, why (periodic, background, sync, …)
//! and how long it took. bpftrace's writeback.bt, with the pages written
//! rather than what was left of the work's budget, and the cgroup whose
//! pages they were.

mod info;

use std::collections::HashMap;

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{CgroupArgs, CommonArgs, ContainerArgs};
use common::kernel::maps;
use common::kernel::probe::{self, load_when, Hook};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::c_bytes;
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("writeback");
use skel::{types, OpenWritebackSkel, WritebackSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    writeback             # trace each round of writeback
    writeback -m 100      # only rounds that took 100 ms or more
    writeback -d 60       # trace for a minute
    writeback --containers  # with the container whose dirty pages were written
    writeback --unit postgresql.service  # only that unit's dirty pages
    writeback --json | jq .";

/// Trace the kernel's writeback of dirty pages to disk: each round's
/// device, pages written, reason and duration.
#[derive(Parser, Debug)]
#[command(name = "writeback", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only rounds that took at least this many milliseconds
    #[arg(short = 'm', long, value_name = "MIN_MS", default_value_t = 0)]
    min_ms: u64,
    /// Trace for this many seconds
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = common::cli::seconds)]
    duration: Option<u64>,
    /// (-c, --container, --unit: the cgroup whose dirty pages were
    /// written, not the flusher's)
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Writeback>();

pub(crate) struct Writeback {
    args: Args,
    event: Record<types::event>,
    table: Table<Writeback>,
    /// enum wb_reason's names, as bpftrace's: `periodic`, `sync`, ….
    reasons: HashMap<i64, String>,
    /// -c's cgroup, judged in the kernel on the round's cgroup.
    cgroup_id: u64,
}

/// WB_SYNC_ALL: a round that waits on every page (sync, fsync of a file
/// system), not only starts them.
const WB_SYNC_ALL: u32 = 1;

impl Tool for Writeback {
    common::tool_types!(WritebackSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        let cgroup_id = args.cgroup.id()?;
        Ok(Writeback {
            cgroup_id,
            table: table(args.common.json).containers(containers),
            args,
            event: Record::new(containers),
            reasons: reason_names(common::kernel::enums::named("wb_reason")),
        })
    }

    fn configure(&mut self, open: &mut OpenWritebackSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.min_ns = self.args.min_ms.saturating_mul(1_000_000);
        rodata.targ_cgroup_id = self.cgroup_id;
        let Some(hook) = probe::pick(&[Hook::TpBtf, Hook::RawTp]) else {
            bail!("this kernel offers neither tp_btf nor raw_tp programs");
        };
        if !probe::btf_tracepoint_exists("writeback_written") {
            bail!("this kernel has no writeback_start/writeback_written tracepoints");
        }
        let p = &mut open.progs;
        load_when(
            hook == Hook::TpBtf,
            [&mut p.wb_btf_start, &mut p.wb_btf_written],
        );
        load_when(
            hook == Hook::RawTp,
            [&mut p.wb_raw_start, &mut p.wb_raw_written],
        );
        Ok(())
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Header {
            header: self.table.header(),
            note: Self::INFO.banner.into(),
        }
    }

    common::event_kind!();

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }
}

common::stamped_by_record!(Writeback);

/// `WB_REASON_PERIODIC` as `periodic`.
fn reason_names(members: Vec<(i64, String)>) -> HashMap<i64, String> {
    members
        .into_iter()
        .filter(|(_, n)| n != "WB_REASON_MAX")
        .map(|(v, n)| {
            let short = n.strip_prefix("WB_REASON_").unwrap_or(&n);
            (v, short.to_ascii_lowercase())
        })
        .collect()
}

impl Writeback {
    fn reason(&self) -> Cell<'_> {
        let r = self.event.reason;
        match self.reasons.get(&i64::from(r)) {
            Some(name) => name.as_str().into(),
            None => r.to_string().into(),
        }
    }
}

/// bpftrace's TIME DEVICE PAGES REASON ms; JSON adds the worker, the
/// cgroup whose pages were written, the sync mode and the latency in ns.
fn table(json: bool) -> Table<Writeback> {
    Table::<Writeback>::new(json).columns([
        columns::time(),
        columns::ts(),
        columns::pid(0).json_only(),
        columns::tid(0).json_only(),
        columns::comm("", 0).json_only(),
        columns::cgroup_id(),
        Column::new("DEVICE", 8, "device", |t: &Writeback| {
            Cell::bytes(c_bytes(&t.event.device))
        }),
        Column::new("PAGES", 8, "pages", |t| t.event.pages.into()),
        Column::new("REASON", 16, "reason", |t| t.reason()),
        Column::new("ms", 0, "", |t| {
            Cell::Float(t.event.latency_ns as f64 / 1e6, 3)
        }),
        Column::json("latency_ns", |t| t.event.latency_ns.into()),
        Column::json("sync_all", |t| (t.event.sync_mode == WB_SYNC_ALL).into()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_follow_bpftraces() {
        assert_eq!(
            table(false).header(),
            "TIME     DEVICE   PAGES    REASON           ms"
        );
    }

    #[test]
    fn reasons_are_named_as_bpftrace_names_them() {
        let names = reason_names(common::kernel::enums::named("wb_reason"));
        // The kernel's own enum: every kernel since 4.x has these.
        for (value, name) in [(0, "background"), (2, "sync"), (3, "periodic")] {
            assert_eq!(
                names.get(&value).map(String::as_str),
                Some(name),
                "{names:?}"
            );
        }
        assert!(!names.values().any(|n| n == "max"), "{names:?}");
    }

    #[test]
    fn arguments_parse() {
        let a = Args::try_parse_from(["writeback", "-m", "5", "-d", "3"]).unwrap();
        assert_eq!((a.min_ms, a.duration), (5, Some(3)));
        assert!(Args::try_parse_from(["writeback", "-m", "x"]).is_err());
    }
}
