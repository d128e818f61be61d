//! runqlen: how many tasks wait on each CPU's run queue, sampled at a
//! frequency on every CPU, as a linear histogram (or -O the share of
//! samples with any waiting).

mod info;

use std::os::fd::AsFd;

use anyhow::Result;
use clap::Parser;
use common::cli::{CommonArgs, HistogramArgs, IntervalCount};
use common::kernel::maps;
use common::kernel::perf::{Counter, Rate, Sampler};
use common::kinds::histogram::{self, Layout, Unit};
use common::output::hist;
use common::run::lifecycle::{self, Setup, Tool};
use libbpf_rs::Link;
use serde_json::{Map, Value};

common::skeleton!("runqlen");
use skel::{types, OpenRunqlenSkel, RunqlenSkel, RunqlenSkelBuilder};

// SAFETY: repr(C) structs of integers, valid for any bytes.
unsafe impl plain::Plain for types::hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    runqlen               # summarize run queue length as a histogram
    runqlen 1 10          # print 1 second summaries, 10 times
    runqlen -T 1          # 1s summaries and timestamps
    runqlen -O            # report run queue occupancy
    runqlen -C            # show each CPU separately
    runqlen -f 199        # sample at 199 Hz
    runqlen --json -C 5 1 | jq .";

/// Summarize scheduler run queue length as a histogram.
#[derive(Parser, Debug)]
#[command(name = "runqlen", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Report run queue occupancy: the share of samples with tasks waiting
    #[arg(short = 'O', long)]
    runqocc: bool,
    /// Print output for each CPU separately
    #[arg(short = 'C', long)]
    cpus: bool,
    /// Samples a second on each CPU
    #[arg(short = 'f', long, value_name = "FREQUENCY", default_value_t = 99,
          value_parser = clap::value_parser!(u64).range(1..))]
    frequency: u64,
    #[command(flatten)]
    interval: IntervalCount,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Runqlen>();

pub(crate) struct Runqlen {
    args: Args,
    /// The histogram kind's options: the interval alone (queue lengths are
    /// no times, for percentiles or Prometheus' seconds).
    hist: HistogramArgs,
    sampler: Option<Sampler>,
}

impl Tool for Runqlen {
    common::tool_types!(RunqlenSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Rate::Frequency(args.frequency).check("-f")?;
        Ok(Runqlen {
            hist: HistogramArgs {
                interval: args.interval.clone(),
                ..HistogramArgs::default()
            },
            args,
            sampler: None,
        })
    }

    fn configure(&mut self, open: &mut OpenRunqlenSkel<'_>, _: &Setup) -> Result<()> {
        maps::rodata(&mut open.maps.rodata_data)?.per_cpu = self.args.cpus;
        Ok(())
    }

    fn hook_notes(&self) -> Vec<String> {
        vec![format!(
            "perf_event cpu-clock (software) at {} Hz on every online CPU",
            self.args.frequency
        )]
    }

    /// The CPU clock always (not cycles where a PMU exists): an idle CPU
    /// counts no cycles, and its empty queue must be sampled too (where
    /// the kernel keeps its clock event running).
    fn attach(&mut self, skel: &mut RunqlenSkel<'_>) -> Result<Vec<Link>> {
        self.sampler = Some(Sampler::start(
            Counter::CpuClock,
            Rate::Frequency(self.args.frequency),
            None,
            skel.progs.rl_sample.as_fd(),
        )?);
        Ok(Vec::new())
    }

    fn idle(&mut self) -> bool {
        if let Some(sampler) = &mut self.sampler {
            sampler.watch(self.args.common.verbose);
        }
        false
    }

    fn detached(&mut self) {
        if let Some(s) = &mut self.sampler {
            s.stop();
        }
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Note("Sampling run queue length... Hit Ctrl-C to end.".into())
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        Some(histogram::Spec {
            args: &self.hist,
            json: self.args.common.json,
            what: "runqlen, run queue length",
            metric: "runqlen_run_queue_length",
            help: "Tasks waiting on a CPU's run queue, sampled",
            unit: Unit::Tasks,
            timestamp: self.args.timestamp,
            extension: false,
            layout: if self.args.runqocc {
                Layout::Occupancy
            } else {
                Layout::Linear {
                    label: "runqlen",
                    step: 1,
                }
            },
        })
    }

    fn sections(&self, skel: &RunqlenSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        // No fine twin: run queue lengths are counted, not timed.
        let entries: Vec<histogram::Entry<u32, types::hist, u8>> =
            histogram::read_maps(&skel.maps.hists, None, drain, |k| *k)?;
        Ok(entries
            .iter()
            .map(|e| {
                let (cpu, h) = (&e.key, &e.hist);
                let mut labels = Map::new();
                let title = self.args.cpus.then(|| {
                    labels.insert("cpu".into(), Value::from(*cpu));
                    format!("cpu = {cpu}")
                });
                hist::Section {
                    title,
                    labels,
                    slots: h.slots.to_vec(),
                    count: h.count,
                    total: h.total,
                    ..Default::default()
                }
            })
            .collect())
    }
}
