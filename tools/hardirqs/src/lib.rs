//! hardirqs: time in each IRQ handler per interval (or -C how many ran, or
//! -d their distributions), by the handler's name, from the kernel's IRQ
//! handler tracepoints.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{CgroupLongArgs, CommonArgs, HistogramArgs, IrqArgs};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::histogram::{self, irq};
use common::output::{c_string, escape, hist};
use common::run::lifecycle::{self, Setup, Tool};
use serde_json::{Map, Value};

common::skeleton!("hardirqs");
use skel::{types, HardirqsSkel, HardirqsSkelBuilder, OpenHardirqsSkel};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::irq_key {}

const EXAMPLES: &str = "\
EXAMPLES:
    hardirqs              # sum the time in each IRQ handler
    hardirqs -d           # show the time in each as a histogram
    hardirqs -C           # count each handler's interrupts instead
    hardirqs 1 10         # print 1 second summaries, 10 times
    hardirqs -NT 1        # 1s summaries, nanoseconds, and timestamps
    hardirqs -c 1         # CPU 1 only
    hardirqs --json -d 5 1 | jq .";

/// Summarize the time spent in hard IRQ handlers, by handler.
#[derive(Parser, Debug)]
#[command(name = "hardirqs", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    #[command(flatten)]
    irq: IrqArgs,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Hardirqs>();

pub(crate) struct Hardirqs {
    args: Args,
}

impl Tool for Hardirqs {
    common::tool_types!(HardirqsSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        irq::check(&args.hist, &args.irq, "interrupts")?;
        Ok(Hardirqs { args })
    }

    fn filters(&self) -> Filters {
        Filters {
            cgroup: self.args.cgroup.path(),
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenHardirqsSkel<'_>, _: &Setup) -> Result<()> {
        let hook = probe::tracepoint_hook("irq", "irq_handler_entry", "2.6.35")?;
        let p = &mut open.progs;
        probe::entry_exit_variant(
            hook,
            [&mut p.hi_btf_entry, &mut p.hi_btf_exit],
            [&mut p.hi_raw_entry, &mut p.hi_raw_exit],
            [&mut p.hi_tp_entry, &mut p.hi_tp_exit],
            self.args.irq.events,
        );
        let a = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.count_only = a.irq.events;
        rodata.nanos = a.irq.nanoseconds;
        rodata.fine = a.hist.fine();
        rodata.target_cpu = a.irq.cpu.map_or(-1, |c| c as i32);
        Ok(())
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Note(irq::banner(&self.args.irq, "hard"))
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        let a = &self.args;
        Some(irq::spec(
            &a.irq,
            &a.hist,
            a.common.json,
            "hardirqs, time in IRQ handlers",
            "hardirqs_time",
            "Time spent in hard IRQ handlers, by handler",
            "HARDIRQ",
            "hardirq",
        ))
    }

    fn sections(&self, skel: &HardirqsSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let a = &self.args;
        let fine = a.hist.fine_map(&skel.maps.fine_hists);
        let entries: Vec<histogram::Entry<types::irq_key, types::hist, types::fine_hist>> =
            histogram::read_maps(&skel.maps.hists, fine, drain, |k: &types::irq_key| k.name)?;
        Ok(entries
            .iter()
            .map(|e| {
                let h = &e.hist;
                let name = c_string(&e.key.name);
                let title = format!("hardirq = {}", escape(name.as_bytes()));
                let mut labels = Map::new();
                labels.insert("hardirq".into(), Value::from(name));
                irq::section(
                    &a.irq,
                    &a.hist,
                    title,
                    labels,
                    (&h.slots, h.count, h.total),
                    e.fine.as_ref().map(|f| &f.slots[..]),
                )
            })
            .collect())
    }
}
