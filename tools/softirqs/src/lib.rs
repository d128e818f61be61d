//! softirqs: time in each kind of softirq per interval (or -C how many ran,
//! or -d their distributions), from the kernel's softirq tracepoints; the
//! kinds named from the running kernel's own enum (BTF), not a typed list.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{CommonArgs, HistogramArgs, IrqArgs};
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::histogram::{self, irq};
use common::output::hist;
use common::run::lifecycle::{self, Setup, Tool};
use serde_json::{Map, Value};

common::skeleton!("softirqs");
use skel::{types, OpenSoftirqsSkel, SoftirqsSkel, SoftirqsSkelBuilder};

// SAFETY: repr(C) structs of integers, valid for any bytes.
unsafe impl plain::Plain for types::hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    softirqs              # sum the time in each kind of softirq
    softirqs -d           # show the time in each as a histogram
    softirqs -C           # count each kind instead
    softirqs 1 10         # print 1 second summaries, 10 times
    softirqs -NT 1        # 1s summaries, nanoseconds, and timestamps
    softirqs -c 1         # CPU 1 only
    softirqs --json -d 5 1 | jq .";

/// Summarize the time spent in soft IRQs (softirqs), by kind.
#[derive(Parser, Debug)]
#[command(name = "softirqs", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    #[command(flatten)]
    irq: IrqArgs,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Softirqs>();

pub(crate) struct Softirqs {
    args: Args,
    /// The kernel's names of the vectors (`net_rx`), by number.
    names: Vec<(i64, String)>,
}

impl Tool for Softirqs {
    common::tool_types!(SoftirqsSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        irq::check(&args.hist, &args.irq, "softirqs")?;
        Ok(Softirqs {
            args,
            names: common::kernel::enums::softirq_names(),
        })
    }

    fn configure(&mut self, open: &mut OpenSoftirqsSkel<'_>, _: &Setup) -> Result<()> {
        let hook = probe::tracepoint_hook("irq", "softirq_entry", "2.6.37")?;
        let p = &mut open.progs;
        probe::entry_exit_variant(
            hook,
            [&mut p.si_btf_entry, &mut p.si_btf_exit],
            [&mut p.si_raw_entry, &mut p.si_raw_exit],
            [&mut p.si_tp_entry, &mut p.si_tp_exit],
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
        lifecycle::Banner::Note(irq::banner(&self.args.irq, "soft"))
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        let a = &self.args;
        Some(irq::spec(
            &a.irq,
            &a.hist,
            a.common.json,
            "softirqs, time in softirq handlers",
            "softirqs_time",
            "Time spent in softirq handlers, by kind",
            "SOFTIRQ",
            "softirq",
        ))
    }

    fn sections(&self, skel: &SoftirqsSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let a = &self.args;
        let fine = a.hist.fine_map(&skel.maps.fine_hists);
        let entries: Vec<histogram::Entry<u32, types::hist, types::fine_hist>> =
            histogram::read_maps(&skel.maps.hists, fine, drain, |k| *k)?;
        Ok(entries
            .iter()
            .map(|e| {
                let (vec, h) = (&e.key, &e.hist);
                let name = common::kernel::enums::softirq_name(&self.names, *vec);
                let mut labels = Map::new();
                labels.insert("softirq".into(), Value::from(name.clone()));
                labels.insert("vec".into(), Value::from(*vec));
                irq::section(
                    &a.irq,
                    &a.hist,
                    format!("softirq = {name}"),
                    labels,
                    (&h.slots, h.count, h.total),
                    e.fine.as_ref().map(|f| &f.slots[..]),
                )
            })
            .collect())
    }
}
