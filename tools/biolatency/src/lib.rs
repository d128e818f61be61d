//! biolatency: block I/O latency as log2 histograms, aggregated in the kernel.

mod flags;
mod info;

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{CgroupArgs, CommonArgs, HistogramArgs};
use common::kernel::disks;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, Hook};
use common::kinds::histogram;
use common::output::hist;
use common::run::lifecycle::{self, Setup, Tool};
use serde_json::{Map, Value};

common::skeleton!("biolatency");
use skel::{types, BiolatencySkel, BiolatencySkelBuilder, OpenBiolatencyProgs, OpenBiolatencySkel};

// SAFETY: repr(C) structs of integers, valid for any bytes.
unsafe impl plain::Plain for types::hist_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    biolatency               # summarize block I/O latency as a histogram
    biolatency 1 10          # print 1 second summaries, 10 times
    biolatency -mT 1         # 1s summaries, milliseconds, and timestamps
    biolatency -Q            # include OS queued time in I/O time
    biolatency -D            # show each disk device separately
    biolatency -F            # show I/O flags separately
    biolatency -d vda        # trace vda only
    biolatency -e            # show extension summary (average, total, count)
    biolatency --percentiles # p50, p90, p99, p99.9 and max per histogram
    biolatency -c /sys/fs/cgroup/system.slice  # I/O issued from this cgroup v2
    biolatency --json 5 1 | jq .";

/// Summarize block device I/O latency as a histogram.
#[derive(Parser, Debug)]
#[command(name = "biolatency", version, after_help = EXAMPLES)]
struct Args {
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Millisecond histogram (default: microseconds)
    #[arg(short = 'm', long)]
    milliseconds: bool,
    /// Include OS queued time in I/O time
    #[arg(short = 'Q', long)]
    queued: bool,
    /// Print a histogram per disk device
    #[arg(short = 'D', long)]
    disks: bool,
    /// Print a histogram per set of I/O flags
    #[arg(short = 'F', long)]
    flags: bool,
    /// Trace this disk only (e.g. vda)
    #[arg(short = 'd', long, value_name = "DISK")]
    disk: Option<String>,
    /// Summarize average, total and count too
    #[arg(short = 'e', long)]
    extension: bool,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Biolatency>();

struct Biolatency {
    args: Args,
    targ_dev: Option<u32>,
    containers: histogram::Containers,
}

impl Tool for Biolatency {
    common::tool_types!(BiolatencySkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let targ_dev = args.disk.as_deref().map(disks::resolve).transpose()?;
        Ok(Biolatency {
            args,
            targ_dev,
            containers: histogram::Containers::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            cgroup: self.args.cgroup.path(),
            disk: self.targ_dev,
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenBiolatencySkel<'_>, _: &Setup) -> Result<()> {
        let args = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.per_disk = args.disks;
        rodata.per_container = args.hist.per_container;
        rodata.per_flags = args.flags;
        rodata.queued = args.queued;
        rodata.millis = args.milliseconds;
        rodata.fine = args.hist.fine();
        // The submitter's cgroup is known where the request starts (a
        // stacked device's worker issues it): --per-container and a cgroup
        // filter hook it too.
        let submitter = args.hist.per_container || args.cgroup.path().is_some();
        choose_programs(&mut open.progs, args.queued || submitter)
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        Some(histogram::Spec {
            args: &self.args.hist,
            json: self.args.common.json,
            what: "biolatency, block I/O latency",
            metric: "biolatency_block_io_latency",
            help: "Block I/O latency, from issue (or insert, with -Q) to completion",
            unit: histogram::Unit::time(self.args.milliseconds),
            timestamp: self.args.timestamp,
            extension: self.args.extension,
            layout: histogram::Layout::Log2,
        })
    }

    fn sections(&self, skel: &BiolatencySkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        sections(&self.args, &self.containers, skel, drain)
    }
}

/// Chooses the hook kind and, per event, the tracepoint this kernel has.
/// `starts`: the request's start (queueing) is hooked too (-Q, --per-container).
fn choose_programs(p: &mut OpenBiolatencyProgs, starts: bool) -> Result<()> {
    let Some(kind) = probe::pick(&[Hook::TpBtf, Hook::RawTp, Hook::Tracepoint]) else {
        bail!("this kernel offers no tp_btf, raw_tp or tracepoint programs");
    };
    let (btf, raw, tp) = (
        kind == Hook::TpBtf,
        kind == Hook::RawTp,
        kind == Hook::Tracepoint,
    );
    probe::load_when(tp, [&mut p.bio_tp_issue, &mut p.bio_tp_complete]);
    probe::load_when(tp && starts, [&mut p.bio_tp_insert]);
    // Before 5.11, block_rq_insert and block_rq_issue passed the queue
    // first: the `_q` programs read their second argument.
    let queue_first = probe::btf_tracepoint_args("block_rq_issue") == Some(2);
    // block_rq_complete fires per partial completion; block_io_done once.
    let io_done = probe::btf_tracepoint_exists("block_io_done");
    // -Q's start: block_io_start where it exists, else block_rq_insert.
    let io_start = starts && probe::btf_tracepoint_exists("block_io_start");
    let insert = starts && !io_start;
    for (on, [b, r]) in [
        (!queue_first, [&mut p.bio_btf_issue, &mut p.bio_raw_issue]),
        (
            queue_first,
            [&mut p.bio_btf_issue_q, &mut p.bio_raw_issue_q],
        ),
        (
            insert && !queue_first,
            [&mut p.bio_btf_insert, &mut p.bio_raw_insert],
        ),
        (
            insert && queue_first,
            [&mut p.bio_btf_insert_q, &mut p.bio_raw_insert_q],
        ),
        (io_start, [&mut p.bio_btf_io_start, &mut p.bio_raw_io_start]),
        (io_done, [&mut p.bio_btf_io_done, &mut p.bio_raw_io_done]),
        (!io_done, [&mut p.bio_btf_complete, &mut p.bio_raw_complete]),
    ] {
        probe::load_when(on && btf, [b]);
        probe::load_when(on && raw, [r]);
    }
    Ok(())
}

/// The histograms the kernel holds, drained (a report) or left in place
/// (a scrape).
fn sections(
    args: &Args,
    containers: &histogram::Containers,
    skel: &BiolatencySkel,
    drain: bool,
) -> Result<Vec<hist::Section>> {
    let fine = args.hist.fine_map(&skel.maps.fine_hists);
    let entries: Vec<histogram::Entry<types::hist_key, types::hist, types::fine_hist>> =
        histogram::read_maps(&skel.maps.hists, fine, drain, |k: &types::hist_key| {
            (k.cgroup_id, k.dev, k.flags)
        })?;
    let sections: Vec<hist::Section> = entries
        .iter()
        .map(|e| {
            let (key, h) = (&e.key, &e.hist);
            let mut labels = Map::new();
            let mut parts = Vec::new();
            if args.hist.per_container {
                parts.push(containers.label(key.cgroup_id, &mut labels));
            }
            if args.disks {
                labels.insert("disk".into(), Value::from(disks::name(key.dev)));
            }
            if args.flags {
                labels.insert("flags".into(), Value::from(flags::flag_names(key.flags)));
            }
            for k in ["disk", "flags"] {
                if let Some(v) = labels.get(k) {
                    parts.push(format!("{k} = {}", v.as_str().unwrap_or_default()));
                }
            }
            let title = parts.join("  ");
            hist::Section {
                title: (!title.is_empty()).then_some(title),
                labels,
                slots: h.slots.to_vec(),
                count: h.count,
                total: h.total,
                ..Default::default()
            }
            .with_fine(e.fine.as_ref().map(|f| &f.slots[..]), args.hist.percentiles)
        })
        .collect();
    Ok(sections)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        let ok = Args::try_parse_from(["biolatency", "-mT", "2", "3"]).unwrap();
        assert_eq!(
            (ok.hist.interval.interval, ok.hist.interval.count),
            (Some(2), Some(3))
        );
    }

    #[test]
    fn unknown_disks_are_named_in_the_error() {
        let err = disks::resolve("nosuchdisk0").unwrap_err().to_string();
        assert!(err.contains("nosuchdisk0"), "{err}");
    }
}
