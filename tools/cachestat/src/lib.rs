//! cachestat: page cache hits, misses and dirtied pages per interval.

mod stats;

use std::time::Duration;

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{self, CommonArgs, IdList};
use common::filters::Filters;
use common::lifecycle::{self, Banner, Schedule, Setup, Tool, When};
use common::maps;
use common::note;
use common::output::Out;
use common::probe::{self, Hook};
use common::prom::Exporter;
use libbpf_rs::skel::OpenSkel;
use libbpf_rs::OpenObject;

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

const FENTRY_ADD: &str = "filemap_add_folio";
const FENTRY_ACCESSED: &str = "folio_mark_accessed";
const FENTRY_BUFFER_DIRTY: &str = "mark_buffer_dirty";
/// folio_account_dirtied is inlined on many builds; its caller serves.
const FENTRY_DIRTIED: &[&str] = &["folio_account_dirtied", "__folio_mark_dirty"];
const TRACEPOINTS: &[&str] = &[
    "mm_filemap_add_to_page_cache",
    "writeback_dirty_folio",
    "mm_filemap_get_pages",
    "mm_filemap_map_pages",
    "mm_filemap_fault",
];

pub fn main() -> std::process::ExitCode {
    lifecycle::main::<Cachestat>()
}

struct Cachestat {
    args: Args,
    mode: Hook,
    previous: [u64; COUNTERS],
    exporter: Option<Exporter>,
    totals: stats::Totals,
}

impl Tool for Cachestat {
    type Args = Args;
    type Builder = CachestatSkelBuilder;
    const MAN: &'static str = include_str!("../man.roff");

    fn new(args: Args) -> Result<Self> {
        let exporter = args.metrics.exporter()?;
        Ok(Cachestat {
            args,
            mode: Hook::Fentry,
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
        self.mode = choose_programs(open.open_object_mut())?;
        Ok(())
    }

    fn banner(&self) -> Banner {
        if self.mode != Hook::Fentry {
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
            self.totals.advance(&now, self.mode == Hook::Fentry);
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
                *mode == Hook::Fentry,
            );
            totals.counters().encode()
        })
    }
}

/// Chooses fentry mode where every function can be traced, else tracepoint
/// mode; switches the other programs (and their maps) off and returns the
/// mode.
fn choose_programs(obj: &mut OpenObject) -> Result<Hook> {
    const VARIANTS: probe::TaskStateVariants = probe::TaskStateVariants {
        btf_prefix: "cs_btf_",
        raw_prefix: "cs_raw_",
        storage_maps: &["reads_storage", "last_added_storage"],
        hash_maps: &["reads", "last_added"],
    };
    let dirtied = FENTRY_DIRTIED
        .iter()
        .find(|f| probe::fentry_target(f))
        .copied();
    let fentry = [FENTRY_ADD, FENTRY_ACCESSED, FENTRY_BUFFER_DIRTY]
        .iter()
        .all(|f| probe::fentry_target(f));
    if let (Some(dirtied), true) = (dirtied, fentry) {
        for mut prog in obj.progs_mut() {
            if prog.name().to_string_lossy() == "cs_fentry_dirty" {
                prog.set_attach_target(0, Some(dirtied.to_string()))?;
            }
        }
        // fentry programs keep per-task state in task storage, as tp_btf.
        probe::skip_programs(obj, VARIANTS.btf_prefix);
        probe::skip_programs(obj, VARIANTS.raw_prefix);
        probe::skip_maps(obj, VARIANTS.hash_maps)?;
        return Ok(Hook::Fentry);
    }
    if let Some(missing) = TRACEPOINTS
        .iter()
        .find(|t| !probe::btf_tracepoint_exists(t))
    {
        bail!(
            "this kernel offers neither fentry on the page cache functions \
             nor the tracepoint {missing} (filemap tracepoints need Linux 6.10+)"
        );
    }
    probe::skip_programs(obj, "cs_fentry_");
    probe::pick_task_state_variant(obj, &VARIANTS)
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
