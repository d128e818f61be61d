//! wqlat: how long work waits on kernel workqueues (queued to started), as
//! log2 histograms in the kernel: BCC's wqlat, on the histogram kind.

mod info;

use std::cell::RefCell;

use anyhow::Result;
use clap::Parser;
use common::cli::{CommonArgs, HistogramArgs};
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::histogram;
use common::output::{c_string, hist};
use common::run::lifecycle::{self, Setup, SkelOf, Tool};
use common::sym::Symbolizer;
use serde_json::{Map, Value};

common::skeleton!("wqlat");
use skel::{types, OpenWqlatSkel, WqlatSkelBuilder};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::wq_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    wqlat                   # summarize workqueue latency as a histogram
    wqlat 1 10              # print 1 second summaries, 10 times
    wqlat -W 1 10           # print 1 second, 10 times per workqueue
    wqlat -NT 1             # 1s summaries, nanoseconds, and timestamps
    wqlat -w nvmet_tcp_wq 1 # 1s summaries for workqueue nvmet_tcp_wq
    wqlat -F                # a histogram per work function
    wqlat --percentiles -W 5 1  # p50, p90, p99, p99.9 and max per workqueue
    wqlat --json -W 5 1 | jq .";

/// WQ_NAME_LEN of Linux 6.8+ (24 before), with its NUL.
const WQ_NAME_MAX: usize = 32;

/// Summarize kernel workqueue latency (work queued until a worker starts
/// it) as histograms.
#[derive(Parser, Debug)]
#[command(name = "wqlat", version, after_help = EXAMPLES)]
struct Args {
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Nanosecond histograms (default: microseconds)
    #[arg(short = 'N', long, conflicts_with = "milliseconds")]
    nanoseconds: bool,
    /// Millisecond histograms
    #[arg(short = 'm', long)]
    milliseconds: bool,
    /// Print a histogram per workqueue
    #[arg(short = 'W', long)]
    workqueues: bool,
    /// Print a histogram per work function
    #[arg(short = 'F', long)]
    functions: bool,
    /// Trace this workqueue only (its name, as the kernel gives it)
    #[arg(short = 'w', long, value_name = "WQNAME", value_parser = wq_name)]
    wqname: Option<String>,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

fn wq_name(s: &str) -> Result<String, String> {
    if s.is_empty() || s.len() >= WQ_NAME_MAX {
        return Err(format!(
            "a workqueue's name has 1 to {} bytes",
            WQ_NAME_MAX - 1
        ));
    }
    Ok(s.into())
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Wqlat>();

struct Wqlat {
    args: Args,
    symbolizer: RefCell<Symbolizer>,
}

impl Tool for Wqlat {
    common::tool_types!(WqlatSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        if args.hist.per_container {
            return Err(common::usage::usage(
                "--per-container: work runs in kernel workers, in no container's name",
            ));
        }
        Ok(Wqlat {
            args,
            symbolizer: RefCell::new(Symbolizer::with_source_lines(false)),
        })
    }

    fn configure(&mut self, open: &mut OpenWqlatSkel<'_>, _: &Setup) -> Result<()> {
        use probe::Hook;
        // The workqueue's name is read through the tracepoint's arguments:
        // the classic tracepoint's record changed its layout in 6.x.
        let hook = probe::btf_tracepoint_exists("workqueue_queue_work")
            .then(|| probe::pick(&[Hook::TpBtf, Hook::RawTp]))
            .flatten()
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "wqlat needs tp_btf or raw_tp programs on workqueue:workqueue_queue_work \
                     (Linux 4.17, with BTF)"
                )
            })?;
        let p = &mut open.progs;
        probe::load_when(
            hook == Hook::TpBtf,
            [&mut p.wq_btf_queue, &mut p.wq_btf_start],
        );
        probe::load_when(
            hook == Hook::RawTp,
            [&mut p.wq_raw_queue, &mut p.wq_raw_start],
        );
        let a = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.per_wq = a.workqueues;
        rodata.per_function = a.functions;
        rodata.fine = a.hist.fine();
        rodata.unit_ns = if a.nanoseconds {
            1
        } else if a.milliseconds {
            1_000_000
        } else {
            1000
        };
        if let Some(name) = &a.wqname {
            rodata.filter_wq = true;
            for (dst, src) in rodata.targ_wq.iter_mut().zip(name.bytes()) {
                *dst = src as _;
            }
        }
        Ok(())
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Note(Self::INFO.banner.into())
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        let a = &self.args;
        Some(histogram::Spec {
            args: &a.hist,
            json: a.common.json,
            what: "wqlat, workqueue latency",
            metric: "wqlat_workqueue_latency",
            help: "Time work waited on a kernel workqueue before a worker started it",
            unit: if a.nanoseconds {
                histogram::Unit::Nsecs
            } else {
                histogram::Unit::time(a.milliseconds)
            },
            timestamp: a.timestamp,
            extension: false,
            layout: histogram::Layout::Log2,
        })
    }

    fn sections(&self, skel: &SkelOf<'_, Self>, drain: bool) -> Result<Vec<hist::Section>> {
        let a = &self.args;
        let fine = a.hist.fine_map(&skel.maps.fine_hists);
        let entries: Vec<histogram::Entry<types::wq_key, types::hist, types::fine_hist>> =
            histogram::read_maps(&skel.maps.hists, fine, drain, |k: &types::wq_key| {
                (c_string(&k.name), k.function)
            })?;
        let div = match self.histograms().map(|s| s.unit) {
            Some(histogram::Unit::Nsecs) => 1,
            Some(histogram::Unit::Msecs) => 1_000_000,
            _ => 1000,
        };
        let mut symbolizer = self.symbolizer.borrow_mut();
        Ok(entries
            .iter()
            .map(|e| {
                let (k, h) = (&e.key, &e.hist);
                let mut labels = Map::new();
                let mut title = Vec::new();
                if a.workqueues {
                    let name = c_string(&k.name);
                    title.push(format!(
                        "wqname = {}",
                        common::output::escape(name.as_bytes())
                    ));
                    labels.insert("wqname".into(), Value::from(name));
                }
                if a.functions {
                    let f = symbolizer.kernel(&[k.function]);
                    let name = f
                        .first()
                        .map_or_else(|| format!("{:#x}", k.function), |f| f.label(false));
                    title.push(format!("function = {name}"));
                    labels.insert("function".into(), Value::from(name));
                }
                hist::Section {
                    title: (!title.is_empty()).then(|| title.join(", ")),
                    labels,
                    slots: h.slots.to_vec(),
                    count: h.count,
                    total: h.total / div,
                    ..Default::default()
                }
                .with_fine(e.fine.as_ref().map(|f| &f.slots[..]), a.hist.percentiles)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_as_bcc_takes_them() {
        let a =
            Args::try_parse_from(["wqlat", "-NT", "-W", "-w", "nvmet_tcp_wq", "1", "10"]).unwrap();
        assert!(a.nanoseconds && a.timestamp && a.workqueues && !a.functions);
        assert_eq!(a.wqname.as_deref(), Some("nvmet_tcp_wq"));
        for bad in [
            &["wqlat", "-w", ""][..],
            &["wqlat", "-w", "a_name_of_thirty_two_bytes_long!"],
            &["wqlat", "-N", "-m"],
            &["wqlat", "0"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?}");
        }
        assert!(Args::try_parse_from(["wqlat", "-w", "a_name_of_thirty_one_bytes_long"]).is_ok());
    }
}
