//! softirqs: time in each kind of softirq per interval (or -C how many ran,
//! or -d their distributions), from the kernel's softirq tracepoints; the
//! kinds named from the running kernel's own enum (BTF), not a typed list.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CommonArgs, HistogramArgs};
use common::kernel::maps;
use common::kernel::probe::{self, load_when, Hook};
use common::kinds::histogram::{self, Totals, Unit};
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
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Output in nanoseconds (default: microseconds)
    #[arg(short = 'N', long)]
    nanoseconds: bool,
    /// Count each kind of softirq instead of timing it
    #[arg(short = 'C', long = "events", visible_alias = "count",
          conflicts_with_all = ["dist", "nanoseconds", "percentiles", "hdr_log"])]
    events: bool,
    /// Show the time of each kind as a histogram
    #[arg(short = 'd', long = "dist", visible_alias = "distributed")]
    dist: bool,
    /// This CPU only
    #[arg(short = 'c', long, value_name = "CPU", value_parser = cli::cpu)]
    cpu: Option<u32>,
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

/// The kernel's softirq vectors, lowercased without `_SOFTIRQ` as its own
/// softirq_to_name has them (`NET_RX_SOFTIRQ` is `net_rx`).
fn vector_names() -> Vec<(i64, String)> {
    common::kernel::enums::with_member("NR_SOFTIRQS")
        .into_iter()
        .filter_map(|(v, n)| Some((v, n.strip_suffix("_SOFTIRQ")?.to_lowercase())))
        .collect()
}

impl Tool for Softirqs {
    common::tool_types!(SoftirqsSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        if args.hist.per_container {
            return Err(common::usage::usage("--per-container: softirqs run in no container's name (they interrupt whatever runs)"));
        }
        Ok(Softirqs {
            args,
            names: vector_names(),
        })
    }

    fn configure(&mut self, open: &mut OpenSoftirqsSkel<'_>, _: &Setup) -> Result<()> {
        let hook = probe::tracepoint_hook("irq", "softirq_entry", "2.6.37")?;
        let p = &mut open.progs;
        load_when(
            hook == Hook::TpBtf,
            [&mut p.si_btf_entry, &mut p.si_btf_exit],
        );
        load_when(
            hook == Hook::RawTp,
            [&mut p.si_raw_entry, &mut p.si_raw_exit],
        );
        load_when(
            hook == Hook::Tracepoint,
            [&mut p.si_tp_entry, &mut p.si_tp_exit],
        );
        // Counting needs the entries alone.
        if self.args.events {
            load_when(
                false,
                [&mut p.si_btf_exit, &mut p.si_raw_exit, &mut p.si_tp_exit],
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
            "Tracing soft irq events... Hit Ctrl-C to end.".into()
        } else {
            "Tracing soft irq event time... Hit Ctrl-C to end.".into()
        })
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        let args = &self.args;
        Some(histogram::Spec {
            args: &args.hist,
            json: args.common.json,
            what: "softirqs, time in softirq handlers",
            metric: "softirqs_time",
            help: "Time spent in softirq handlers, by kind",
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
                    header: "SOFTIRQ",
                    label: "softirq",
                    counts: args.events,
                })
            },
        })
    }

    fn sections(&self, skel: &SoftirqsSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let args = &self.args;
        let mut entries: Vec<(u32, Box<types::hist>)> = maps::read_as(&skel.maps.hists, drain)?;
        entries.sort_by_key(|(k, _)| *k);
        let fine: Vec<(u32, Box<types::fine_hist>)> = if args.hist.fine() {
            maps::read_as(&skel.maps.fine_hists, drain)?
        } else {
            Vec::new()
        };
        // The kernel sums nanoseconds (no truncation per softirq).
        let div = if args.nanoseconds { 1 } else { 1000 };
        Ok(entries
            .iter()
            .map(|(vec, h)| {
                let name = self
                    .names
                    .iter()
                    .find(|(v, _)| *v == *vec as i64)
                    .map_or_else(|| format!("vec{vec}"), |(_, n)| n.clone());
                let mut labels = Map::new();
                labels.insert("softirq".into(), Value::from(name.clone()));
                labels.insert("vec".into(), Value::from(*vec));
                hist::Section {
                    title: Some(format!("softirq = {name}")),
                    labels,
                    slots: h.slots.to_vec(),
                    count: h.count,
                    total: h.total / div,
                    ..Default::default()
                }
                .with_fine(
                    fine.iter()
                        .find(|(k, _)| k == vec)
                        .map(|(_, f)| &f.slots[..]),
                    args.hist.percentiles,
                )
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_named_as_the_kernel_names_them() {
        let names = vector_names();
        assert!(names.contains(&(0, "hi".into())), "{names:?}");
        assert!(names.contains(&(3, "net_rx".into())), "{names:?}");
        assert!(names.iter().all(|(_, n)| n != "nr"), "{names:?}");
    }
}
