//! cachestat: page cache hits, misses and dirtied pages per interval.

mod info;
mod stats;

use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Parser;
use common::cli::{self, CommonArgs, IdList};
use common::filters::Filters;
use common::lifecycle::{self, Banner, Schedule, Setup, Tool, When};
use common::maps;
use common::note;
use common::output::Out;
use common::probe::{self, Hook};
use common::prom::Exporter;
use libbpf_rs::skel::{OpenSkel, Skel};
use libbpf_rs::{Link, OpenObject};

common::skeleton!("cachestat");
use skel::{CachestatSkel, CachestatSkelBuilder, OpenCachestatSkel};

const EXAMPLES: &str = "\
EXAMPLES:
    cachestat             # show page cache hits and misses every second
    cachestat -T 1        # with a time column
    cachestat 5 3         # three 5 second summaries, then exit
    cachestat -p 1234     # only what process 1234 does
    cachestat --json 1 | jq .";

/// Count page cache hits and misses, and the hit ratio, every interval.
///
/// Where fentry works, the page cache functions are traced as BCC does.
/// Elsewhere the filemap and writeback tracepoints serve; accesses are then
/// counted from the page ranges of reads and faults, an approximation
/// (stated on stderr).
#[derive(Parser, Debug)]
#[command(name = "cachestat", version, after_help = EXAMPLES)]
struct Args {
    /// Include a time column (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Count only what these processes do (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Output interval, in seconds
    #[arg(default_value_t = 1, value_parser = cli::seconds)]
    interval: u64,
    /// Number of outputs before exiting (default: unlimited)
    #[arg(value_parser = cli::positive_u64)]
    count: Option<u64>,
    #[command(flatten)]
    metrics: cli::MetricsArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// The kernel side's counters (enum cache_counter in cachestat.h).
use skel::types::cache_counter as Counter;
const ACCESSED: usize = Counter::CNT_ACCESSED.0 as usize;
const ADDED: usize = Counter::CNT_ADDED.0 as usize;
const WRITE_ADDED: usize = Counter::CNT_WRITE_ADDED.0 as usize;
const DIRTIED: usize = Counter::CNT_DIRTIED.0 as usize;
const BUFFER_DIRTIED: usize = Counter::CNT_BUFFER_DIRTIED.0 as usize;
const COUNTERS: usize = Counter::CNT_MAX.0 as usize;

/// The functions BCC hooks, in one kernel generation's names.
struct Functions {
    add: &'static str,
    accessed: &'static str,
    /// The first of these that can be traced (one is inlined on some builds).
    dirtied: &'static [&'static str],
    buffer_dirty: &'static str,
}

/// 5.16+: folios. folio_account_dirtied is inlined on many builds; its
/// caller serves.
const FOLIO_FUNCTIONS: Functions = Functions {
    add: "filemap_add_folio",
    accessed: "folio_mark_accessed",
    dirtied: &["folio_account_dirtied", "__folio_mark_dirty"],
    buffer_dirty: "mark_buffer_dirty",
};

/// Before 5.16: pages, BCC's own names.
const PAGE_FUNCTIONS: Functions = Functions {
    add: "add_to_page_cache_lru",
    accessed: "mark_page_accessed",
    dirtied: &["account_page_dirtied"],
    buffer_dirty: "mark_buffer_dirty",
};

impl Functions {
    /// The functions, with the dirtying one found, if `traceable` says
    /// every one can be traced.
    fn traceable(&self, traceable: impl Fn(&str) -> bool) -> Option<[&'static str; 4]> {
        let dirtied = self.dirtied.iter().copied().find(|f| traceable(f))?;
        [self.add, self.accessed, self.buffer_dirty]
            .iter()
            .all(|f| traceable(f))
            .then_some([self.add, self.accessed, dirtied, self.buffer_dirty])
    }
}
const TRACEPOINTS: &[&str] = &[
    "mm_filemap_add_to_page_cache",
    "writeback_dirty_folio",
    "mm_filemap_get_pages",
    "mm_filemap_map_pages",
    "mm_filemap_fault",
];

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Cachestat>();

struct Cachestat {
    args: Args,
    mode: Hook,
    /// kprobe mode: each program and the function it goes on.
    kprobes: Vec<(&'static str, &'static str)>,
    previous: [u64; COUNTERS],
    exporter: Option<Exporter>,
    totals: stats::Totals,
}

impl Tool for Cachestat {
    type Args = Args;
    type Builder = CachestatSkelBuilder;
    const INFO: &'static registry::ToolInfo = &info::INFO;

    fn new(args: Args) -> Result<Self> {
        let exporter = args.metrics.exporter()?;
        Ok(Cachestat {
            args,
            mode: Hook::Fentry,
            kprobes: Vec::new(),
            previous: [0; COUNTERS],
            exporter,
            totals: stats::Totals::default(),
        })
    }

    fn common(&self) -> &CommonArgs {
        &self.args.common
    }

    fn filters(&self) -> Filters {
        Filters::pids(&self.args.pid)
    }

    fn configure(&mut self, open: &mut OpenCachestatSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        // SAFETY: sysconf has no preconditions.
        let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
        rodata.page_shift = page_size.trailing_zeros();
        (self.mode, self.kprobes) = choose_programs(open.open_object_mut())?;
        Ok(())
    }

    fn attach(&mut self, skel: &mut CachestatSkel<'_>) -> Result<Vec<Link>> {
        let mut links = lifecycle::attach_all(skel.object())?;
        for (name, function) in &self.kprobes {
            let prog = skel
                .object()
                .progs_mut()
                .find(|p| p.name() == *name)
                .with_context(|| format!("no program {name}"))?;
            links.push(
                prog.attach_kprobe(false, function)
                    .with_context(|| format!("attaching a kprobe to {function}"))?,
            );
        }
        Ok(links)
    }

    fn banner(&self) -> Banner {
        if !stats::exact(self.mode) {
            note!(
                "tracepoint mode ({}; fentry is not available): hits are \
                 approximated from the page ranges of reads and faults",
                self.mode
            );
        }
        let time = if self.args.timestamp {
            format!("{:<8} ", "TIME")
        } else {
            String::new()
        };
        Banner::Header {
            header: format!(
                "{time}{:>8} {:>8} {:>8} {:>8} {:>12} {:>10}",
                "HITS", "MISSES", "DIRTIES", "HITRATIO", "BUFFERS_MB", "CACHED_MB"
            ),
            note: "Tracing page cache... Hit Ctrl-C to end.".into(),
        }
    }

    fn schedule(&self) -> Schedule {
        Schedule {
            interval: Some(Duration::from_secs(self.args.interval)),
            count: self.args.count,
            duration: None,
        }
    }

    /// One line per interval, and one for the part interval at the end, so
    /// that nothing counted goes unreported.
    fn report(&mut self, skel: &CachestatSkel<'_>, out: &mut Out, _: When) -> Result<()> {
        let now = stats::read_counters(&skel.maps.counts)?;
        let mut delta = [0u64; COUNTERS];
        for (i, d) in delta.iter_mut().enumerate() {
            *d = now[i].saturating_sub(self.previous[i]);
        }
        self.previous = now;
        stats::print_interval(out, &self.args, &delta, self.mode)?;
        if let Some(exporter) = &self.exporter {
            self.totals.advance(&now, stats::exact(self.mode));
            exporter.reported(|| self.totals.counters().encode())?;
        }
        Ok(())
    }

    fn extra_fd(&self) -> Option<std::os::fd::RawFd> {
        self.exporter.as_ref().and_then(Exporter::fd)
    }

    fn extra_ready(&mut self, skel: &CachestatSkel<'_>) -> Result<()> {
        let Cachestat {
            exporter: Some(exporter),
            totals,
            mode,
            ..
        } = self
        else {
            return Ok(());
        };
        exporter.serve(|| {
            totals.advance(
                &stats::read_counters(&skel.maps.counts)?,
                stats::exact(*mode),
            );
            totals.counters().encode()
        })
    }
}

/// Chooses the mode: BCC's functions by fentry (folio names, or page names
/// before 5.16), by kprobes where fentry is missing, else the filemap
/// tracepoints (6.10+, approximate). Switches the other programs (and their
/// maps) off; returns the mode and, for kprobes, where each program goes.
fn choose_programs(obj: &mut OpenObject) -> Result<(Hook, Vec<(&'static str, &'static str)>)> {
    const VARIANTS: probe::TaskStateVariants = probe::TaskStateVariants {
        btf_prefix: "cs_btf_",
        raw_prefix: "cs_raw_",
        storage_maps: &["reads_storage", "last_added_storage"],
        hash_maps: &["reads", "last_added"],
    };
    const ALL: &[&str] = &[
        "cs_fentry_",
        "cs_pfentry_",
        "cs_kprobe_",
        VARIANTS.btf_prefix,
        VARIANTS.raw_prefix,
    ];
    let keep_only = |obj: &mut OpenObject, prefix: &str| {
        for p in ALL.iter().filter(|p| **p != prefix) {
            probe::skip_programs(obj, p);
        }
    };
    if let Some([.., dirtied, _]) = FOLIO_FUNCTIONS.traceable(probe::fentry_target) {
        for mut prog in obj.progs_mut() {
            if prog.name().to_string_lossy() == "cs_fentry_dirty" {
                prog.set_attach_target(0, Some(dirtied.to_string()))?;
            }
        }
        // fentry programs keep per-task state in task storage, as tp_btf.
        keep_only(obj, "cs_fentry_");
        probe::skip_maps(obj, VARIANTS.hash_maps)?;
        return Ok((Hook::Fentry, Vec::new()));
    }
    if PAGE_FUNCTIONS.traceable(probe::fentry_target).is_some() {
        keep_only(obj, "cs_pfentry_");
        probe::skip_maps(obj, VARIANTS.storage_maps)?;
        return Ok((Hook::Fentry, Vec::new()));
    }
    let kprobes = match (
        FOLIO_FUNCTIONS.traceable(probe::kprobe_target),
        PAGE_FUNCTIONS.traceable(probe::kprobe_target),
    ) {
        (Some([add, accessed, dirtied, buffer]), _) => Some([
            ("cs_kprobe_add_folio", add),
            ("cs_kprobe_accessed", accessed),
            ("cs_kprobe_dirty_folio", dirtied),
            ("cs_kprobe_buffer_dirty", buffer),
        ]),
        (None, Some([add, accessed, dirtied, buffer])) => Some([
            ("cs_kprobe_add_page", add),
            ("cs_kprobe_accessed", accessed),
            ("cs_kprobe_dirty_page", dirtied),
            ("cs_kprobe_buffer_dirty", buffer),
        ]),
        (None, None) => None,
    };
    if let Some(kprobes) = kprobes {
        keep_only(obj, "cs_kprobe_");
        for mut prog in obj.progs_mut() {
            let name = prog.name().to_string_lossy().into_owned();
            if name.starts_with("cs_kprobe_") && !kprobes.iter().any(|(p, _)| *p == name) {
                prog.set_autoload(false);
            }
        }
        probe::skip_maps(obj, VARIANTS.storage_maps)?;
        return Ok((Hook::Kprobe, kprobes.to_vec()));
    }
    if let Some(missing) = TRACEPOINTS
        .iter()
        .find(|t| !probe::btf_tracepoint_exists(t))
    {
        bail!(
            "this kernel offers neither fentry nor kprobes on the page cache functions, \
             nor the tracepoint {missing} (filemap tracepoints need Linux 6.10+)"
        );
    }
    for prefix in ["cs_fentry_", "cs_pfentry_", "cs_kprobe_"] {
        probe::skip_programs(obj, prefix);
    }
    Ok((probe::pick_task_state_variant(obj, &VARIANTS)?, Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked() {
        common::testing::check_arguments::<Args>(&[
            &["cachestat", "0"][..],
            &["cachestat", "1", "0"],
            &["cachestat", "-p", "x"],
            &["cachestat", "-2"],
            &["cachestat", "18446744073709551615"],
        ]);
    }
}
