//! readahead: pages the kernel read ahead, how many went unused, and a
//! histogram of the used ones' age at their first use.

mod info;

use std::cell::Cell;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, HistogramArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::histogram;
use common::output::hist;
use common::run::lifecycle::{self, attach_all, Schedule, Setup, SkelOf, Tool};
use libbpf_rs::skel::Skel;
use libbpf_rs::{Link, MapCore, MapFlags};

common::skeleton!("readahead");
use skel::{types, OpenReadaheadSkel, ReadaheadSkel, ReadaheadSkelBuilder};

// SAFETY: repr(C) structs of integers, valid for any bytes.
unsafe impl plain::Plain for types::ra_hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::ra_counts {}

/// The read-ahead windows: the first is needed, the second (6.1+, large
/// folios) taken where it exists.
const WINDOWS: [&str; 2] = ["page_cache_ra_unbounded", "page_cache_ra_order"];
/// The page cache's allocation, newest name first.
const ALLOCS: [&str; 3] = [
    "filemap_alloc_folio_noprof",
    "filemap_alloc_folio",
    "__page_cache_alloc",
];
/// A page's use, newest first.
const ACCESSED: [&str; 2] = ["folio_mark_accessed", "mark_page_accessed"];

const EXAMPLES: &str = "\
EXAMPLES:
    readahead             # trace read-ahead until Ctrl-C, then report
    readahead -d 10       # trace for 10 seconds
    readahead -m          # the age histogram in milliseconds
    readahead 5 3         # a report every 5 seconds, 3 times
    readahead -p 181      # only read-ahead done for process 181's reads
    readahead --json -d 5 | jq .";

/// Show pages read ahead, how many were not used, and the age of the used
/// ones at their first use.
#[derive(Parser, Debug)]
#[command(name = "readahead", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Trace for DURATION seconds, then report (else until Ctrl-C)
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = cli::seconds)]
    duration: Option<u64>,
    /// Millisecond histogram (default: microseconds)
    #[arg(short = 'm', long)]
    milliseconds: bool,
    /// Include a timestamp on each report (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Only read-ahead done for these processes' reads (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Readahead>();

/// The kernel functions this kernel offers, and how they are hooked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Plan {
    fentry: bool,
    windows: Vec<&'static str>,
    alloc: &'static str,
    accessed: &'static str,
}

impl Plan {
    /// fentry where the kernel allows it on every function needed, else
    /// kprobes; else the error the user reads.
    fn choose() -> Result<Plan> {
        for fentry in [true, false] {
            let hooks = |f: &&str| {
                if fentry {
                    probe::fentry_target(f)
                } else {
                    probe::kprobe_target(f)
                }
            };
            let windows: Vec<&str> = WINDOWS.iter().copied().filter(hooks).collect();
            let alloc = ALLOCS.iter().copied().find(hooks);
            let accessed = ACCESSED.iter().copied().find(hooks);
            if let (true, Some(alloc), Some(accessed)) =
                (windows.first() == Some(&WINDOWS[0]), alloc, accessed)
            {
                return Ok(Plan {
                    fentry,
                    windows,
                    alloc,
                    accessed,
                });
            }
        }
        bail!(
            "this kernel offers neither fentry nor kprobes on its read-ahead functions \
             ({}, {} or {}, {}; no tracepoint marks read-ahead): readahead needs one of them",
            WINDOWS[0],
            ALLOCS[1],
            ALLOCS[2],
            ACCESSED[0]
        )
    }

    /// Where the allocation returns a folio of 2^order pages.
    fn folios(&self) -> bool {
        self.alloc != "__page_cache_alloc"
    }
}

/// True if this kernel lets readahead attach (for its tests).
pub fn hooks_present() -> bool {
    Plan::choose().is_ok()
}

pub(crate) struct Readahead {
    args: Args,
    plan: Option<Plan>,
    /// The allocations counted at the last report (the kernel's counters
    /// only grow): each report's total is its own interval's.
    reported_total: Cell<u64>,
    reported_dropped: Cell<u64>,
}

impl Tool for Readahead {
    common::tool_types!(ReadaheadSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Readahead {
            args,
            plan: None,
            reported_total: Cell::new(0),
            reported_dropped: Cell::new(0),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    /// Chosen here, after the arguments and the privileges are checked, so
    /// that those errors come first.
    fn configure(&mut self, open: &mut OpenReadaheadSkel<'_>, _: &Setup) -> Result<()> {
        let plan = Plan::choose()?;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.millis = self.args.milliseconds;
        rodata.fine = self.args.hist.fine();
        let (f, k) = (plan.fentry, !plan.fentry);
        let order = plan.windows.len() > 1;
        let p = &mut open.progs;
        probe::load_when(f, [&mut p.ra_fentry_unbounded, &mut p.ra_fexit_unbounded]);
        probe::load_when(f && order, [&mut p.ra_fentry_order, &mut p.ra_fexit_order]);
        probe::load_when(f && plan.alloc == ALLOCS[0], [&mut p.ra_fexit_folio_noprof]);
        probe::load_when(f && plan.alloc == ALLOCS[1], [&mut p.ra_fexit_folio]);
        probe::load_when(f && plan.alloc == ALLOCS[2], [&mut p.ra_fexit_page]);
        probe::load_when(
            f && plan.accessed == ACCESSED[0],
            [&mut p.ra_fentry_folio_accessed],
        );
        probe::load_when(
            f && plan.accessed == ACCESSED[1],
            [&mut p.ra_fentry_page_accessed],
        );
        probe::load_when(
            k,
            [
                &mut p.ra_kprobe_window,
                &mut p.ra_kretprobe_window,
                &mut p.ra_kprobe_accessed,
            ],
        );
        probe::load_when(
            k && plan.folios(),
            [&mut p.ra_kprobe_folio, &mut p.ra_kretprobe_folio],
        );
        probe::load_when(k && !plan.folios(), [&mut p.ra_kretprobe_page]);
        self.plan = Some(plan);
        Ok(())
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        let plan = self.plan.as_ref().filter(|p| !p.fentry)?;
        Some(match program {
            "ra_kprobe_window" | "ra_kretprobe_window" => plan.windows.join(","),
            "ra_kprobe_accessed" => plan.accessed.to_string(),
            _ => plan.alloc.to_string(),
        })
    }

    /// The kprobes name no function in their sections: attached here to
    /// the functions this kernel has.
    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let mut links = attach_all(skel.object())?;
        let Some(plan) = self.plan.as_ref().filter(|p| !p.fentry) else {
            return Ok(links);
        };
        let p = &skel.progs;
        let mut probes = Vec::new();
        for w in &plan.windows {
            probes.push((&p.ra_kprobe_window, false, *w));
            probes.push((&p.ra_kretprobe_window, true, *w));
        }
        if plan.folios() {
            probes.push((&p.ra_kprobe_folio, false, plan.alloc));
            probes.push((&p.ra_kretprobe_folio, true, plan.alloc));
        } else {
            probes.push((&p.ra_kretprobe_page, true, plan.alloc));
        }
        probes.push((&p.ra_kprobe_accessed, false, plan.accessed));
        for (prog, ret, function) in probes {
            links.push(
                prog.attach_kprobe(ret, function)
                    .with_context(|| format!("attaching a kprobe to {function}"))?,
            );
        }
        Ok(links)
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Note("Tracing fs read-ahead... Hit Ctrl-C to end.".into())
    }

    fn schedule(&self) -> Schedule {
        let mut s = Schedule::from(&self.args.hist.interval);
        s.duration = self.args.duration.map(Duration::from_secs);
        s
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        Some(histogram::Spec {
            args: &self.args.hist,
            json: self.args.common.json,
            what: "readahead, the age of read-ahead pages at their first use",
            metric: "readahead_page_age",
            help: "Age of pages read ahead at their first use",
            unit: histogram::Unit::time(self.args.milliseconds),
            timestamp: self.args.timestamp,
            extension: false,
            layout: histogram::Layout::Log2,
        })
    }

    /// The one histogram, titled as libbpf-tools' line of pages: those not
    /// used yet (since the start) of those read ahead (this interval).
    fn sections(&self, skel: &ReadaheadSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let fine = self.args.hist.fine_map(&skel.maps.fine_hists);
        let entries: Vec<histogram::Entry<u32, types::ra_hist, types::fine_hist>> =
            histogram::read_maps(&skel.maps.hists, fine, drain, |k| *k)?;
        let counts = read_counts(&skel.maps.counts)?;
        let total = counts.total.saturating_sub(self.reported_total.get());
        let dropped = counts.dropped.saturating_sub(self.reported_dropped.get());
        if drain {
            self.reported_total.set(counts.total);
            self.reported_dropped.set(counts.dropped);
            if dropped > 0 {
                common::note!(
                    "{dropped} read-ahead pages not followed: the table of pages \
                     waiting for their first use was full"
                );
            }
        }
        let unused = counts.unused.max(0) as u64;
        let mut section = hist::Section {
            title: Some(format!("Readahead unused/total pages: {unused}/{total}")),
            ..Default::default()
        };
        section.labels.insert("unused_pages".into(), unused.into());
        section.labels.insert("total_pages".into(), total.into());
        section
            .labels
            .insert("dropped_pages".into(), dropped.into());
        if let Some(e) = entries.first() {
            section.slots = e.hist.hist.slots.to_vec();
            section.count = e.hist.hist.count;
            section.total = e.hist.hist.total;
            let fine = e.fine.as_ref().map(|f| &f.slots[..]);
            section = section.with_fine(fine, self.args.hist.percentiles);
        }
        Ok(vec![section])
    }
}

/// The kernel's page counters (key 0 of `counts`).
fn read_counts(map: &dyn MapCore) -> Result<types::ra_counts> {
    let bytes = map
        .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
        .context("reading the read-ahead counters")?
        .unwrap_or_default();
    Ok(maps::decode(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse() {
        let a = Args::try_parse_from(["readahead", "-d", "5", "-m", "-p", "3"]).unwrap();
        assert_eq!((a.duration, a.milliseconds), (Some(5), true));
        let a = Args::try_parse_from(["readahead", "2", "3"]).unwrap();
        assert_eq!(
            (a.hist.interval.interval, a.hist.interval.count),
            (Some(2), Some(3))
        );
        assert!(Args::try_parse_from(["readahead", "-d", "0"]).is_err());
    }

    #[test]
    fn functions_are_newest_first() {
        assert_eq!(WINDOWS[0], "page_cache_ra_unbounded");
        let plan = |alloc| Plan {
            fentry: true,
            windows: vec![WINDOWS[0]],
            alloc,
            accessed: ACCESSED[0],
        };
        assert!(plan(ALLOCS[0]).folios() && plan(ALLOCS[1]).folios());
        assert!(!plan(ALLOCS[2]).folios());
    }
}
