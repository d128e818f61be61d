//! runqlat: scheduler run queue latency as log2 histograms, in the kernel.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, HistogramArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::histogram;
use common::output::hist;
use common::run::lifecycle::{self, Setup, Tool};

use libbpf_rs::skel::OpenSkel;

common::skeleton!("runqlat");
use skel::{types, OpenRunqlatSkel, RunqlatSkel, RunqlatSkelBuilder};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::rq_hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    runqlat               # summarize run queue latency as a histogram
    runqlat 1 10          # print 1 second summaries, 10 times
    runqlat -mT 1         # 1s summaries, milliseconds, and timestamps
    runqlat -P            # show each process separately
    runqlat -L            # show each thread separately
    runqlat --pidnss      # show each pid namespace separately
    runqlat --per-container  # show each container (or unit) separately
    runqlat -p 185,190    # trace these processes only
    runqlat -c /sys/fs/cgroup/system.slice  # woken tasks of this cgroup v2 only
    runqlat --percentiles # p50, p90, p99, p99.9 and max per histogram
    runqlat --json 5 1 | jq .";

/// Summarize run queue (scheduler) latency as a histogram.
#[derive(Parser, Debug)]
#[command(name = "runqlat", version, after_help = EXAMPLES)]
struct Args {
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Millisecond histogram (default: microseconds)
    #[arg(short = 'm', long)]
    milliseconds: bool,
    /// Print a histogram per process
    #[arg(short = 'P', long, conflicts_with_all = ["tids", "pidnss", "per_container"])]
    pids: bool,
    /// Print a histogram per thread
    #[arg(short = 'L', long, conflicts_with_all = ["pidnss", "per_container"])]
    tids: bool,
    /// Print a histogram per pid namespace
    #[arg(long, conflicts_with = "per_container")]
    pidnss: bool,
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Runqlat>();

struct Runqlat {
    args: Args,
    cgroup_id: u64,
    containers: histogram::Containers,
}

impl Tool for Runqlat {
    common::tool_types!(RunqlatSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let cgroup_id = args.cgroup.id()?;
        Ok(Runqlat {
            args,
            cgroup_id,
            containers: histogram::Containers::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::pids(&self.args.pid)
    }

    fn configure(&mut self, open: &mut OpenRunqlatSkel<'_>, _: &Setup) -> Result<()> {
        let args = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.per_process = args.pids;
        rodata.per_thread = args.tids;
        rodata.per_pidns = args.pidnss;
        rodata.per_container = args.hist.per_container;
        rodata.millis = args.milliseconds;
        rodata.fine = args.hist.fine();
        rodata.targ_cgroup_id = self.cgroup_id;
        // Wakeup times: task storage for tp_btf, a hash map for raw_tp.
        probe::task_state_sections(open.open_object_mut())?;
        Ok(())
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        Some(histogram::Spec {
            args: &self.args.hist,
            json: self.args.common.json,
            what: "runqlat, run queue latency",
            metric: "runqlat_run_queue_latency",
            help: "Time runnable tasks waited on a run queue",
            unit: histogram::Unit::time(self.args.milliseconds),
            timestamp: self.args.timestamp,
            extension: false,
            layout: histogram::Layout::Log2,
        })
    }

    /// The histograms the kernel holds, drained (a report) or left in
    /// place (a scrape).
    fn sections(&self, skel: &RunqlatSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let args = &self.args;
        let fine = args.hist.fine_map(&skel.maps.fine_hists);
        let entries: Vec<histogram::Entry<u64, types::rq_hist, types::fine_hist>> =
            histogram::read_maps(&skel.maps.hists, fine, drain, |k| *k)?;
        let keyed = entries.iter().map(|e| common::keyed_entry!(e));
        let by = histogram::Key::chosen(args.hist.per_container, args.pids, args.tids, args.pidnss);
        let percentiles = args.hist.percentiles;
        Ok(histogram::keyed_sections(
            keyed,
            by,
            &self.containers,
            percentiles,
        ))
    }
}
