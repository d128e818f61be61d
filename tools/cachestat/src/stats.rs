//! One interval's figures from the kernel's counters, and how they print.

use anyhow::{Context, Result};
use common::kernel::maps;
use common::kernel::probe::Hook;
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, Timed};
use libbpf_rs::MapCore;

use crate::Args;
use crate::{ACCESSED, ADDED, BUFFER_DIRTIED, COUNTERS, DIRTIED, WRITE_ADDED};

/// Counted as BCC counts, on the page cache functions (fentry or kprobes),
/// not approximated from the filemap tracepoints.
pub fn exact(mode: Hook) -> bool {
    matches!(mode, Hook::Fentry | Hook::Kprobe)
}

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
            stats: Stats::from_counters(delta, exact(mode)),
            buffers_mb,
            cached_mb,
            mode: match mode {
                Hook::Fentry => "fentry",
                Hook::Kprobe => "kprobe",
                _ => "tracepoint",
            },
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

/// One interval's figures, never negative.
#[derive(Debug, PartialEq, Eq)]
pub struct Stats {
    hits: u64,
    misses: u64,
    dirties: u64,
}

impl Stats {
    /// Misses are pages added to the cache except those a write added;
    /// hits are accesses that were not misses. In the exact modes, accesses
    /// are BCC's: folio_mark_accessed calls less mark_buffer_dirty calls.
    fn from_counters(c: &[u64; COUNTERS], fentry: bool) -> Stats {
        let accesses = if fentry {
            c[ACCESSED].saturating_sub(c[BUFFER_DIRTIED])
        } else {
            c[ACCESSED]
        };
        let misses = c[ADDED].saturating_sub(c[WRITE_ADDED]);
        Stats {
            hits: accesses.saturating_sub(misses),
            misses,
            dirties: c[DIRTIED],
        }
    }

    fn ratio_percent(&self) -> f64 {
        let total = self.hits + self.misses;
        if total == 0 {
            0.0
        } else {
            self.hits as f64 * 100.0 / total as f64
        }
    }
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
    pub fn advance(&mut self, now: &[u64; COUNTERS], fentry: bool) {
        let mut delta = [0u64; COUNTERS];
        for (i, d) in delta.iter_mut().enumerate() {
            *d = now[i].saturating_sub(self.last[i]);
        }
        self.last = *now;
        let s = Stats::from_counters(&delta, fentry);
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

/// Buffers and Cached from /proc/meminfo, in MiB.
pub fn meminfo_mb() -> Result<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/meminfo").context("reading /proc/meminfo")?;
    Ok(parse_meminfo(&text))
}

pub fn parse_meminfo(text: &str) -> (u64, u64) {
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
            / 1024
    };
    (field("Buffers"), field("Cached"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_never_negative() {
        let mut c = [0u64; COUNTERS];
        c[ACCESSED] = 10;
        c[ADDED] = 50;
        c[WRITE_ADDED] = 60;
        c[DIRTIED] = 7;
        let s = Stats::from_counters(&c, false);
        assert_eq!(
            s,
            Stats {
                hits: 10,
                misses: 0,
                dirties: 7
            }
        );
        c[WRITE_ADDED] = 0;
        let s = Stats::from_counters(&c, false);
        assert_eq!(
            s,
            Stats {
                hits: 0,
                misses: 50,
                dirties: 7
            }
        );
        assert_eq!(s.ratio_percent(), 0.0);
        c[BUFFER_DIRTIED] = 100;
        assert_eq!(Stats::from_counters(&c, true).hits, 0);
    }

    #[test]
    fn meminfo_fields_are_read_in_mib() {
        let text = "MemTotal: 100 kB\nBuffers:          2048 kB\nCached:         1048576 kB\nSwapCached: 5 kB\n";
        assert_eq!(parse_meminfo(text), (2, 1024));
    }
}
