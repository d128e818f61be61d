//! hardirqs: time in each IRQ handler per interval (or -C how many ran, or
//! -d their distributions), by the handler's name, from the kernel's IRQ
//! handler tracepoints.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, HistogramArgs};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when, Hook};
use common::kinds::histogram::{self, Totals, Unit};
use common::output::{c_string, hist};
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
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Output in nanoseconds (default: microseconds)
    #[arg(short = 'N', long)]
    nanoseconds: bool,
    /// Count each handler's interrupts instead of timing them
    #[arg(short = 'C', long = "count", visible_alias = "events",
          conflicts_with_all = ["dist", "nanoseconds", "percentiles", "hdr_log"])]
    events: bool,
    /// Show the time of each handler as a histogram
    #[arg(short = 'd', long = "dist", visible_alias = "distributed")]
    dist: bool,
    /// This CPU only
    #[arg(short = 'c', long, value_name = "CPU", value_parser = cli::cpu)]
    cpu: Option<u32>,
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
        if args.hist.per_container {
            return Err(common::usage::usage("--per-container: interrupts run in no container's name (they interrupt whatever runs)"));
        }
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
        load_when(
            hook == Hook::TpBtf,
            [&mut p.hi_btf_entry, &mut p.hi_btf_exit],
        );
        load_when(
            hook == Hook::RawTp,
            [&mut p.hi_raw_entry, &mut p.hi_raw_exit],
        );
        load_when(
            hook == Hook::Tracepoint,
            [&mut p.hi_tp_entry, &mut p.hi_tp_exit],
        );
        // Counting needs the entries alone.
        if self.args.events {
            load_when(
                false,
                [&mut p.hi_btf_exit, &mut p.hi_raw_exit, &mut p.hi_tp_exit],
            );
        }
        let args = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.count_only = args.events;
        rodata.nanos = args.nanoseconds;
        rodata.fine = args.hist.fine();
        rodata.target_cpu = args.cpu.map_or(-1, |c| c as i32);
        Ok(())
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Note(if self.args.events {
            "Tracing hard irq events... Hit Ctrl-C to end.".into()
        } else {
            "Tracing hard irq event time... Hit Ctrl-C to end.".into()
        })
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        let args = &self.args;
        Some(histogram::Spec {
            args: &args.hist,
            json: args.common.json,
            what: "hardirqs, time in IRQ handlers",
            metric: "hardirqs_time",
            help: "Time spent in hard IRQ handlers, by handler",
            unit: if args.nanoseconds {
                Unit::Nsecs
            } else {
                Unit::Usecs
            },
            timestamp: args.timestamp,
            extension: false,
            layout: if args.dist {
                histogram::Layout::Log2
            } else {
                histogram::Layout::Totals(Totals {
                    header: "HARDIRQ",
                    label: "hardirq",
                    counts: args.events,
                })
            },
        })
    }

    fn sections(&self, skel: &HardirqsSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let args = &self.args;
        let mut entries: Vec<(types::irq_key, Box<types::hist>)> =
            maps::read_as(&skel.maps.hists, drain)?;
        entries.sort_by_key(|(k, _)| k.name);
        let fine: Vec<(types::irq_key, Box<types::fine_hist>)> = if args.hist.fine() {
            maps::read_as(&skel.maps.fine_hists, drain)?
        } else {
            Vec::new()
        };
        // The kernel sums nanoseconds (no truncation per interrupt).
        let div = if args.nanoseconds { 1 } else { 1000 };
        Ok(entries
            .iter()
            .map(|(key, h)| {
                let name = c_string(&key.name);
                let mut labels = Map::new();
                labels.insert("hardirq".into(), Value::from(name.clone()));
                hist::Section {
                    title: Some(format!(
                        "hardirq = {}",
                        common::output::escape(name.as_bytes())
                    )),
                    labels,
                    slots: h.slots.to_vec(),
                    count: h.count,
                    total: h.total / div,
                    ..Default::default()
                }
                .with_fine(
                    fine.iter()
                        .find(|(k, _)| k.name == key.name)
                        .map(|(_, f)| &f.slots[..]),
                    args.hist.percentiles,
                )
            })
            .collect())
    }
}
