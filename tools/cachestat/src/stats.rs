//! One interval's figures from the kernel's counters, and how they print.

use anyhow::{Context, Result};
use common::kernel::maps;
use common::kernel::pagecache::{self, meminfo_mb, Stats, COUNTERS};
use common::kernel::probe::Hook;
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, Timed};
use libbpf_rs::MapCore;

use crate::Args;

/// One interval's line: its figures, the page cache's size, the mode.
pub struct Line {
    stats: Stats,
    buffers_mb: u64,
    cached_mb: u64,
    mode: &'static str,
}

impl Line {
    pub fn new(delta: &[u64; COUNTERS], mode: Hook) -> Result<Line> {
        let (buffers_mb, cached_mb) = meminfo_mb()?;
        Ok(Line {
            stats: Stats::from_counters(delta, pagecache::exact(mode)),
            buffers_mb,
            cached_mb,
            mode: pagecache::mode_name(mode),
        })
    }
}

/// BCC's columns (the time first with -T); in JSON the mode too.
pub fn table(args: &Args) -> Table<Timed<Line>> {
    table::timed(args.common.json)
        .column(
            args.timestamp,
            Column::new("TIME", 8, "", |t: &Timed<Line>| t.time.as_str().into()),
        )
        .columns([
            Column::right("HITS", 8, "hits", |t| t.row.stats.hits.into()),
            Column::right("MISSES", 8, "misses", |t| t.row.stats.misses.into()),
            Column::right("DIRTIES", 8, "dirties", |t| t.row.stats.dirties.into()),
            Column::right("HITRATIO", 8, "", |t| {
                format!("{:.2}%", t.row.stats.ratio_percent()).into()
            }),
            Column::json("hit_ratio", |t| Cell::Float(t.row.stats.ratio_percent(), 2)),
            Column::right("BUFFERS_MB", 12, "buffers_mb", |t| t.row.buffers_mb.into()),
            Column::right("CACHED_MB", 10, "cached_mb", |t| t.row.cached_mb.into()),
            Column::json("mode", |t| t.row.mode.into()),
        ])
}

/// Sums each per-CPU counter.
pub fn read_counters(map: &dyn MapCore) -> Result<[u64; COUNTERS]> {
    let mut sums = [0u64; COUNTERS];
    for (i, sum) in sums.iter_mut().enumerate() {
        *sum = maps::percpu_sum_at(map, i as u32).context("reading the counters")?;
    }
    Ok(sums)
}

/// Hits, misses and dirties since the start, for --prometheus: the sum of
/// each reading's figures, each clipped at zero as an interval's are, so
/// that they only grow, as counters must.
#[derive(Debug, Default)]
pub struct Totals {
    last: [u64; COUNTERS],
    hits: u64,
    misses: u64,
    dirties: u64,
}

impl Totals {
    /// Adds what the counters gained since the last reading.
    pub fn advance(&mut self, now: &[u64; COUNTERS], exact: bool) {
        let mut delta = [0u64; COUNTERS];
        for (i, d) in delta.iter_mut().enumerate() {
            *d = now[i].saturating_sub(self.last[i]);
        }
        self.last = *now;
        let s = Stats::from_counters(&delta, exact);
        self.hits += s.hits;
        self.misses += s.misses;
        self.dirties += s.dirties;
    }

    pub fn counters(&self) -> common::export::prom::Counters {
        let lone = |n: u64| vec![(Vec::new(), n)];
        common::export::prom::Counters {
            families: vec![
                (
                    "cachestat_page_cache_hits",
                    "Page cache accesses that found the page",
                    lone(self.hits),
                ),
                (
                    "cachestat_page_cache_misses",
                    "Pages read into the page cache (not written)",
                    lone(self.misses),
                ),
                (
                    "cachestat_page_cache_dirties",
                    "Page cache pages dirtied",
                    lone(self.dirties),
                ),
            ],
        }
    }
}
