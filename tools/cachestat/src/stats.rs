//! One interval's figures from the kernel's counters, and how they print.

use std::io::Write;

use anyhow::{Context, Result};
use common::kernel::maps;
use common::kernel::probe::Hook;
use common::output::{now_hms, Out};
use libbpf_rs::MapCore;
use serde_json::json;

use crate::Args;
use crate::{ACCESSED, ADDED, BUFFER_DIRTIED, COUNTERS, DIRTIED, WRITE_ADDED};

/// Counted as BCC counts, on the page cache functions (fentry or kprobes),
/// not approximated from the filemap tracepoints.
pub fn exact(mode: Hook) -> bool {
    matches!(mode, Hook::Fentry | Hook::Kprobe)
}

pub fn print_interval(
    out: &mut Out,
    args: &Args,
    delta: &[u64; COUNTERS],
    mode: Hook,
) -> Result<()> {
    let stats = Stats::from_counters(delta, exact(mode));
    let (buffers, cached) = meminfo_mb()?;
    let time = now_hms();
    if args.common.json {
        out.json(&json!({
            "time": time,
            "hits": stats.hits,
            "misses": stats.misses,
            "dirties": stats.dirties,
            "hit_ratio": stats.ratio_percent(),
            "buffers_mb": buffers,
            "cached_mb": cached,
            "mode": if exact(mode) { mode.to_string() } else { "tracepoint".into() },
        }))?;
    } else {
        if args.timestamp {
            write!(out, "{time:<8} ")?;
        }
        writeln!(
            out,
            "{:>8} {:>8} {:>8} {:>7.2}% {:>12} {:>10}",
            stats.hits,
            stats.misses,
            stats.dirties,
            stats.ratio_percent(),
            buffers,
            cached
        )?;
    }
    Ok(())
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
