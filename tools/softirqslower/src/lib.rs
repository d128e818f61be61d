//! softirqslower: softirqs that waited too long to run after being raised,
//! or ran too long, in libbpf-tools' layout, from the irq:softirq_*
//! tracepoints.

mod info;

use std::io;

use anyhow::Result;
use clap::Parser;
use common::cli::{CgroupLongArgs, CommonArgs, ContainerArgs};
use common::kernel::filters::Filters;
use common::kernel::{maps, probe};
use common::kinds::event::{columns, Column, Record, Table};
use common::output::Out;
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("softirqslower");
use skel::{types, OpenSoftirqslowerSkel, SoftirqslowerSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    softirqslower         # softirqs waiting or running over 10000 us (default)
    softirqslower 100000  # over 100000 us
    softirqslower -c 1    # on CPU 1 only
    softirqslower -d 10   # for 10 seconds
    softirqslower --containers  # with the container of the task it ran in
    softirqslower --json 1000 | jq .";

/// Trace slow softirqs: the wait from a softirq's raise to its handler
/// (irq(hard) to softirq), and the handler's run (softirq runtime), over a
/// threshold.
#[derive(Parser, Debug)]
#[command(name = "softirqslower", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// The shortest wait or run shown, in microseconds
    #[arg(value_name = "MIN_US", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..=u64::MAX / 1000))]
    min_us: u64,
    /// Trace this CPU only
    #[arg(short = 'c', long, value_name = "CPU", value_parser = common::cli::cpu)]
    cpu: Option<u32>,
    /// Trace for this many seconds
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = common::cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Softirqslower>();

pub(crate) struct Softirqslower {
    args: Args,
    event: Record<types::event>,
    table: Table<Softirqslower>,
    /// The kernel's names of the vectors (`net_rx`).
    names: Vec<(i64, String)>,
}

impl Tool for Softirqslower {
    common::tool_types!(SoftirqslowerSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Softirqslower {
            table: table(args.common.json).containers(containers),
            args,
            event: Record::new(containers),
            names: common::kernel::enums::softirq_names(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&None, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenSoftirqslowerSkel<'_>, _: &Setup) -> Result<()> {
        let hook = probe::tracepoint_hook("irq", "softirq_raise", "2.6.37")?;
        let p = &mut open.progs;
        probe::hook_variant(hook, &mut p.raise_btf, &mut p.raise_raw, &mut p.raise_tp);
        probe::entry_exit_variant(
            hook,
            [&mut p.entry_btf, &mut p.exit_btf],
            [&mut p.entry_raw, &mut p.exit_raw],
            [&mut p.entry_tp, &mut p.exit_tp],
            false,
        );
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.min_ns = self.args.min_us * 1000;
        rodata.target_cpu = self.args.cpu.map_or(-1, |c| c as i32);
        Ok(())
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Header {
            header: self.table.header(),
            note: format!(
                "Tracing softirq latency higher than {} us... Hit Ctrl-C to end.",
                self.args.min_us
            ),
        }
    }

    common::event_kind!(table);

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        self.table.row(out, self)
    }
}

common::stamped_by_record!(Softirqslower);

impl Softirqslower {
    fn stage(&self) -> &'static str {
        match types::softirq_stage(self.event.stage) {
            types::softirq_stage::STAGE_RAISE_TO_ENTRY => "irq(hard) to softirq",
            _ => "softirq runtime",
        }
    }

    fn stage_key(&self) -> &'static str {
        match types::softirq_stage(self.event.stage) {
            types::softirq_stage::STAGE_RAISE_TO_ENTRY => "raise_to_entry",
            _ => "runtime",
        }
    }
}

/// libbpf-tools' `TIME STAGE SOFTIRQ LAT(us) CPU COMM`.
fn table(json: bool) -> Table<Softirqslower> {
    Table::<Softirqslower>::new(json).columns([
        columns::time(),
        columns::ts(),
        Column::new("STAGE", 20, "", |t: &Softirqslower| t.stage().into()),
        Column::json("stage", |t: &Softirqslower| t.stage_key().into()),
        Column::new("SOFTIRQ", 8, "softirq", |t: &Softirqslower| {
            common::kernel::enums::softirq_name(&t.names, t.event.vec).into()
        }),
        Column::json("vec", |t: &Softirqslower| t.event.vec.into()),
        Column::new("LAT(us)", 14, "", |t: &Softirqslower| {
            (t.event.delta_ns / 1000).into()
        }),
        Column::json("latency_ns", |t: &Softirqslower| t.event.delta_ns.into()),
        Column::new("CPU", 6, "cpu", |t: &Softirqslower| t.event.cpu.into()),
        columns::comm("COMM", 0),
        columns::pid(0).json_only(),
        columns::tid(0).json_only(),
        columns::cgroup_id(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_libbpf_tools() {
        assert_eq!(
            table(false).header().trim_end(),
            "TIME     STAGE                SOFTIRQ  LAT(us)        CPU    COMM"
        );
    }

    #[test]
    fn options_parse_as_libbpf_tools_takes_them() {
        let a = Args::try_parse_from(["softirqslower", "-c", "1", "100000"]).unwrap();
        assert_eq!((a.cpu, a.min_us), (Some(1), 100_000));
        assert_eq!(
            Args::try_parse_from(["softirqslower"]).unwrap().min_us,
            10_000
        );
        for bad in [
            &["softirqslower", "0"][..],
            &["softirqslower", "-5"],
            &["softirqslower", "1", "2"],
            &["softirqslower", "-c", "x"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }
}
