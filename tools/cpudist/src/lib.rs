//! cpudist: how long tasks run each time they get a CPU (or, -O, how long
//! they wait off it), as log2 histograms kept in the kernel.

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

common::skeleton!("cpudist");
use skel::{types, CpudistSkel, CpudistSkelBuilder, OpenCpudistSkel};

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::cpu_hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    cpudist               # summarize on-CPU time as a histogram
    cpudist -O            # summarize off-CPU time as a histogram
    cpudist 1 10          # print 1 second summaries, 10 times
    cpudist -mT 1         # 1s summaries, milliseconds, and timestamps
    cpudist -P            # show each process separately
    cpudist -L            # show each thread separately
    cpudist --per-container  # show each container (or unit) separately
    cpudist -p 185,190    # trace these processes only
    cpudist -I            # include CPU idle time
    cpudist -e            # show extension summary (average/total/count)
    cpudist --percentiles # p50, p90, p99, p99.9 and max per histogram
    cpudist --json 5 1 | jq .";

/// Summarize on- and off-CPU time per task as a histogram.
#[derive(Parser, Debug)]
#[command(name = "cpudist", version, after_help = EXAMPLES)]
struct Args {
    /// Measure off-CPU time (between a task's runs) instead
    #[arg(short = 'O', long)]
    offcpu: bool,
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Millisecond histogram (default: microseconds)
    #[arg(short = 'm', long)]
    milliseconds: bool,
    /// Print a histogram per process
    #[arg(short = 'P', long, conflicts_with_all = ["tids", "per_container"])]
    pids: bool,
    /// Print a histogram per thread
    #[arg(short = 'L', long, conflicts_with = "per_container")]
    tids: bool,
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Include the CPUs' idle time (the idle task's runs)
    #[arg(short = 'I', long)]
    include_idle: bool,
    /// Show the average, total and count under each histogram
    #[arg(short = 'e', long)]
    extension: bool,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Cpudist>();

struct Cpudist {
    args: Args,
    cgroup_id: u64,
    containers: histogram::Containers,
}

impl Tool for Cpudist {
    common::tool_types!(CpudistSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let cgroup_id = args.cgroup.id()?;
        Ok(Cpudist {
            args,
            cgroup_id,
            containers: histogram::Containers::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::pids(&self.args.pid)
    }

    fn configure(&mut self, open: &mut OpenCpudistSkel<'_>, _: &Setup) -> Result<()> {
        let args = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.off_cpu = args.offcpu;
        rodata.include_idle = args.include_idle;
        rodata.per_process = args.pids;
        rodata.per_thread = args.tids;
        rodata.per_container = args.hist.per_container;
        rodata.millis = args.milliseconds;
        rodata.fine = args.hist.fine();
        rodata.targ_cgroup_id = self.cgroup_id;
        probe::task_state_sections(open.open_object_mut())?;
        Ok(())
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Note(format!(
            "Tracing {}-CPU time... Hit Ctrl-C to end.",
            if self.args.offcpu { "off" } else { "on" }
        ))
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        let (what, metric, help) = if self.args.offcpu {
            (
                "cpudist, off-CPU time",
                "cpudist_off_cpu_time",
                "Time tasks spent off a CPU between runs",
            )
        } else {
            (
                "cpudist, on-CPU time",
                "cpudist_on_cpu_time",
                "Time tasks ran on a CPU each time they were scheduled",
            )
        };
        Some(histogram::Spec {
            args: &self.args.hist,
            json: self.args.common.json,
            what,
            metric,
            help,
            unit: histogram::Unit::time(self.args.milliseconds),
            timestamp: self.args.timestamp,
            extension: self.args.extension,
            layout: histogram::Layout::Log2,
        })
    }

    fn sections(&self, skel: &CpudistSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let args = &self.args;
        let fine = args.hist.fine_map(&skel.maps.fine_hists);
        let entries: Vec<histogram::Entry<u64, types::cpu_hist, types::fine_hist>> =
            histogram::read_maps(&skel.maps.hists, fine, drain, |k| *k)?;
        let by = histogram::Key::chosen(args.hist.per_container, args.pids, args.tids, false);
        let keyed = entries.iter().map(|e| common::keyed_entry!(e));
        Ok(histogram::keyed_sections(
            keyed,
            by,
            &self.containers,
            args.hist.percentiles,
        ))
    }
}
