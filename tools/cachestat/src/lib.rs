//! cachestat: page cache hits, misses and dirtied pages per interval.

mod info;
mod stats;

use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CommonArgs, IdList};
use common::export::prom::Counters;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::pagecache::{self, COUNTERS};
use common::kernel::probe::Hook;
use common::kinds::event::Table;
use common::kinds::table::{self, Timed};
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool, When};
use libbpf_rs::skel::Skel;
use libbpf_rs::Link;

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

common::page_cache_counters_match!(skel::types::cache_counter);

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Cachestat>();

struct Cachestat {
    args: Args,
    mode: Hook,
    /// Where the kprobe programs go, in kprobe mode.
    kprobes: Option<pagecache::Kprobes>,
    previous: [u64; COUNTERS],
    table: Table<Timed<stats::Line>>,
    totals: stats::Totals,
}

impl Tool for Cachestat {
    common::tool_types!(CachestatSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        Ok(Cachestat {
            table: stats::table(&args),
            args,
            mode: Hook::Fentry,
            kprobes: None,
            previous: [0; COUNTERS],
            totals: stats::Totals::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::pids(&self.args.pid)
    }

    fn configure(&mut self, open: &mut OpenCachestatSkel<'_>, _: &Setup) -> Result<()> {
        maps::rodata(&mut open.maps.rodata_data)?.page_shift = pagecache::page_shift();
        (self.mode, self.kprobes) = common::choose_page_cache_programs!(open.progs, open.maps)?;
        Ok(())
    }

    fn attach(&mut self, skel: &mut CachestatSkel<'_>) -> Result<Vec<Link>> {
        let mut links = lifecycle::attach_all(skel.object())?;
        if let Some(k) = &self.kprobes {
            links.extend(common::attach_page_cache_kprobes!(k, skel.progs)?);
        }
        Ok(links)
    }

    fn degraded(&self) -> Option<String> {
        pagecache::degraded(self.mode)
    }

    fn banner(&self) -> Banner {
        Banner::Header {
            header: self.table.header(),
            note: "Tracing page cache... Hit Ctrl-C to end.".into(),
        }
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        let schedule = Schedule {
            interval: Some(Duration::from_secs(self.args.interval)),
            count: self.args.count,
            duration: None,
        };
        let metrics = Some(&self.args.metrics);
        Some(table::Spec::lines(self.args.common.json, schedule, metrics))
    }

    /// One line per interval, and one for the part interval at the end, so
    /// that nothing counted goes unreported.
    fn interval_rows<'s>(
        &'s mut self,
        skel: &CachestatSkel<'_>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let now = stats::read_counters(&skel.maps.counts)?;
        let mut delta = [0u64; COUNTERS];
        for (i, d) in delta.iter_mut().enumerate() {
            *d = now[i].saturating_sub(self.previous[i]);
        }
        self.previous = now;
        let line = stats::Line::new(&delta, self.mode)?;
        Ok(Box::new(table::Rows::new(
            vec![line],
            &self.table,
            |_, _| std::cmp::Ordering::Equal,
        )))
    }

    fn interval_metrics(&mut self, skel: &CachestatSkel<'_>, _: table::Asked) -> Result<Counters> {
        let now = stats::read_counters(&skel.maps.counts)?;
        self.totals.advance(&now, pagecache::exact(self.mode));
        Ok(self.totals.counters())
    }
}
