//! Histograms aggregated in the kernel (bits.bpf.h): BCC's log2 table,
//! percentiles from the fine log-linear twin, and JSON.
//!
//! The fine twin is loaded into an HdrHistogram, each bucket's count at its
//! middle value: HdrHistogram's 3 significant digits resolve far finer than
//! a fine bucket (1/16), so every value stays inside its bucket, and a
//! percentile lies in the log2 slot holding the same rank. The same
//! histogram goes to `--hdr-log` (hdrlog.rs).

use std::io::{self, Write};

use hdrhistogram::Histogram;

use serde_json::{json, Map, Value};

/// Sub-buckets per power of two in the fine histogram (hist.h).
pub const FINE_SUB_BITS: u32 = Sizes::FINE_SUB_BITS.0;
/// Fine slots in a fine histogram.
pub const FINE_SLOTS: usize = Sizes::FINE_SLOTS.0 as usize;
use crate::skel::types::hist_layout as Sizes;
const FINE_SUBS: u64 = 1 << FINE_SUB_BITS;

/// The values log2 slot `i` holds: `[low, high]`, inclusive, as BCC shows them.
pub fn log2_bounds(i: usize) -> (u64, u64) {
    let high = (1u64 << (i + 1)) - 1;
    let low = if i == 0 { 0 } else { 1u64 << i };
    (low, high)
}

/// The log2 slot of a value: what bits.bpf.h's log2l computes in the
/// kernel (0 and 1 share slot 0).
pub fn log2_slot(v: u64) -> usize {
    if v < 2 {
        0
    } else {
        63 - v.leading_zeros() as usize
    }
}

/// The fine slot of a value: what bits.bpf.h computes in the kernel.
pub fn fine_slot(v: u64) -> usize {
    if v < FINE_SUBS {
        return v as usize;
    }
    let p = 63 - v.leading_zeros();
    ((p - FINE_SUB_BITS + 1) as u64 * FINE_SUBS + ((v >> (p - FINE_SUB_BITS)) & (FINE_SUBS - 1)))
        as usize
}

/// The values fine slot `s` holds: `[low, high]`, inclusive.
pub fn fine_bounds(s: usize) -> (u64, u64) {
    let s = s as u64;
    if s < FINE_SUBS {
        return (s, s);
    }
    let p = s / FINE_SUBS + FINE_SUB_BITS as u64 - 1;
    let width = 1u64 << (p - FINE_SUB_BITS as u64);
    let low = (1u64 << p) + (s % FINE_SUBS) * width;
    (low, low + width - 1)
}

/// The percentiles `--percentiles` reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentiles {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

/// A fine histogram as an HdrHistogram (values in the tool's unit); `None`
/// when it is empty.
pub fn to_hdr(fine: &[u32]) -> Option<Histogram<u64>> {
    let mut h = Histogram::<u64>::new(3).ok()?;
    for (s, &c) in fine.iter().enumerate().filter(|(_, &c)| c > 0) {
        let (lo, hi) = fine_bounds(s);
        h.record_n(lo + (hi - lo) / 2, u64::from(c)).ok()?;
    }
    (!h.is_empty()).then_some(h)
}

/// Percentiles of an HdrHistogram made by `to_hdr` (what `--hdr-log`'s
/// readers compute too); the max is given: the top of the highest
/// non-empty fine bucket (within 1/16 of the true max).
pub fn percentiles_of(h: &Histogram<u64>, max: u64) -> Percentiles {
    Percentiles {
        p50: h.value_at_quantile(0.50),
        p90: h.value_at_quantile(0.90),
        p99: h.value_at_quantile(0.99),
        p999: h.value_at_quantile(0.999),
        max,
    }
}

/// Percentiles of a fine histogram; `None` when it is empty.
pub fn percentiles(fine: &[u32]) -> Option<Percentiles> {
    let top = fine.iter().rposition(|&c| c > 0)?;
    Some(percentiles_of(&to_hdr(fine)?, fine_bounds(top).1))
}

fn stars(out: &mut dyn Write, val: u32, max: u32, width: u32) -> io::Result<()> {
    let n = (val.min(max) as u64 * width as u64 / max.max(1) as u64) as usize;
    write!(out, "{}{}", "*".repeat(n), " ".repeat(width as usize - n))?;
    if val > max {
        write!(out, "+")?;
    }
    Ok(())
}

/// Prints a log2 histogram in BCC's layout: a `unit : count distribution`
/// header, one row per slot from 0 to the last non-empty one, bars of 40
/// stars (20 and wider columns past slot 32). Prints nothing when empty.
pub fn print_log2(out: &mut dyn Write, slots: &[u32], unit: &str) -> io::Result<()> {
    let Some(last) = slots.iter().rposition(|&c| c > 0) else {
        return Ok(());
    };
    let max = slots.iter().copied().max().unwrap_or(0);
    let wide = last > 32;
    let (pad, label, width, bar) = if wide {
        (15, 29, 20, 20)
    } else {
        (5, 19, 10, 40)
    };
    writeln!(out, "{:pad$}{unit:<label$} : count    distribution", "")?;
    for (i, &val) in slots.iter().enumerate().take(last + 1) {
        let (low, high) = log2_bounds(i);
        write!(out, "{low:>width$} -> {high:<width$} : {val:<8} |")?;
        stars(out, val, max, bar)?;
        writeln!(out, "|")?;
    }
    Ok(())
}

/// Prints a linear histogram as BCC's print_linear_hist does: a row per
/// slot, slot N holding the values from N × `step`, from 0 to the last
/// with a count (step 1: BCC's runqlen), or from the first with one (wider
/// slots: libbpf-tools' cpufreq), each row named by its low end.
pub fn print_linear(out: &mut dyn Write, slots: &[u32], label: &str, step: u64) -> io::Result<()> {
    let Some(last) = slots.iter().rposition(|&c| c > 0) else {
        return Ok(());
    };
    let first = if step > 1 {
        slots.iter().position(|&c| c > 0).unwrap_or(0)
    } else {
        0
    };
    let max = slots.iter().copied().max().unwrap_or(0);
    writeln!(out, "     {label:<13} : count     distribution")?;
    for (i, &val) in slots.iter().enumerate().take(last + 1).skip(first) {
        let low = i as u64 * step;
        write!(out, "        {low:<10} : {val:<8} |")?;
        stars(out, val, max, 40)?;
        writeln!(out, "|")?;
    }
    Ok(())
}

/// JSON buckets of a linear histogram: slot N the values N × `step` to
/// the next slot's.
fn linear_buckets(v: &mut Value, slots: &[u32], step: u64) {
    let buckets: Vec<Value> = slots
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, &c)| {
            let low = i as u64 * step;
            json!({"low": low, "high": low + step - 1, "count": c})
        })
        .collect();
    v["buckets"] = buckets.into();
}

/// The percentage of a section's samples above zero.
fn occupancy(s: &Section) -> f64 {
    let zero = s.slots.first().copied().unwrap_or(0) as u64;
    if s.count == 0 {
        0.0
    } else {
        100.0 * s.count.saturating_sub(zero) as f64 / s.count as f64
    }
}

fn print_occupancy(out: &mut crate::output::Out, sections: &[Section]) -> io::Result<()> {
    for s in sections {
        match s.labels.get("cpu") {
            Some(cpu) => writeln!(
                out,
                "runqocc, CPU {:<3} {:6.2}%",
                cpu.to_string(),
                occupancy(s)
            )?,
            None => writeln!(out, "runqocc: {:0.2}%", occupancy(s))?,
        }
    }
    Ok(())
}

/// Prints `-e`'s summary line, as BCC's biolatency does.
pub fn print_extension(out: &mut dyn Write, count: u64, total: u64, unit: &str) -> io::Result<()> {
    let avg = total.checked_div(count).unwrap_or(0);
    writeln!(
        out,
        "\navg = {avg} {unit}, total: {total} {unit}, count: {count}"
    )
}

/// Prints the percentiles line that follows a table with --percentiles.
pub fn print_percentiles(out: &mut dyn Write, p: &Percentiles, unit: &str) -> io::Result<()> {
    writeln!(
        out,
        "\npercentiles ({unit}): p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
        p.p50, p.p90, p.p99, p.p999, p.max
    )
}

/// One histogram as a JSON object: `labels` (disk, pid, …) first, then the
/// unit, count, total, non-empty buckets, and percentiles when given.
pub fn to_json(
    labels: Map<String, Value>,
    unit: &str,
    slots: &[u32],
    count: u64,
    total: u64,
    pct: Option<&Percentiles>,
) -> Value {
    let mut obj = labels;
    obj.insert("unit".into(), unit.into());
    obj.insert("count".into(), count.into());
    obj.insert("total".into(), total.into());
    let buckets: Vec<Value> = slots
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, &c)| {
            let (low, high) = log2_bounds(i);
            json!({"low": low, "high": high, "count": c})
        })
        .collect();
    obj.insert("buckets".into(), buckets.into());
    if let Some(p) = pct {
        obj.insert(
            "percentiles".into(),
            json!({"p50": p.p50, "p90": p.p90, "p99": p.p99, "p99.9": p.p999, "max": p.max}),
        );
    }
    Value::Object(obj)
}

/// What a histogram's values count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Nsecs,
    Usecs,
    Msecs,
    Kbytes,
    /// Tasks (runqlen's queue lengths).
    Tasks,
    /// Megahertz (cpufreq's CPU frequencies).
    Mhz,
    /// Connections waiting for accept() (tcpsynbl's listen backlogs).
    Backlog,
}

impl Unit {
    /// Microseconds, or milliseconds with -m.
    pub fn time(millis: bool) -> Unit {
        if millis {
            Unit::Msecs
        } else {
            Unit::Usecs
        }
    }

    /// BCC's column label.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Nsecs => "nsecs",
            Unit::Usecs => "usecs",
            Unit::Msecs => "msecs",
            Unit::Kbytes => "Kbytes",
            Unit::Tasks => "tasks",
            Unit::Mhz => "MHz",
            Unit::Backlog => "backlog",
        }
    }

    /// Units per Prometheus base unit (seconds, bytes): values are divided
    /// by it.
    pub fn per_base(self) -> f64 {
        match self {
            Unit::Nsecs => 1e9,
            Unit::Usecs => 1e6,
            Unit::Msecs => 1e3,
            Unit::Kbytes => 1.0 / 1024.0,
            Unit::Tasks | Unit::Backlog => 1.0,
            Unit::Mhz => 1e-6,
        }
    }
}

/// One histogram of an interval's report.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// The text header (`disk = vda`, `pid = 42 bash`); none for a lone histogram.
    pub title: Option<String>,
    /// The same identity for JSON (`{"disk": "vda"}`).
    pub labels: Map<String, Value>,
    pub slots: Vec<u32>,
    pub count: u64,
    pub total: u64,
    pub percentiles: Option<Percentiles>,
    /// The fine histogram, for `--hdr-log`.
    pub hdr: Option<Histogram<u64>>,
    /// What JSON adds to the labels, and no metric: a per-interval figure
    /// (futexctn's shortest wait) or a list (its stack), which as a label
    /// would make a new series each time.
    pub extra: Map<String, Value>,
}

impl Section {
    /// Adds what the fine histogram gives: percentiles when `percentiles`,
    /// and the HdrHistogram itself.
    pub fn with_fine(mut self, fine: Option<&[u32]>, percentiles: bool) -> Section {
        let Some(fine) = fine else { return self };
        self.hdr = to_hdr(fine);
        if percentiles {
            if let (Some(h), Some(top)) = (&self.hdr, fine.iter().rposition(|&c| c > 0)) {
                self.percentiles = Some(percentiles_of(h, fine_bounds(top).1));
            }
        }
        self
    }
}

/// How an aggregating tool prints its report.
#[derive(Debug, Clone, Copy)]
pub struct Style<'a> {
    pub unit: &'a str,
    pub json: bool,
    /// `-T`: the time on a line of its own before each report.
    pub timestamp: bool,
    /// `-e`: average, total and count after each table.
    pub extension: bool,
    /// How each report looks in text (and its JSON buckets).
    pub layout: Layout,
}

/// How a histogram tool's report looks.
#[derive(Debug, Clone, Copy, Default)]
pub enum Layout {
    /// BCC's log2 histograms, one per section.
    #[default]
    Log2,
    /// Linear histograms, slot N holding the values from N × `step` (BCC's
    /// print_linear_hist: runqlen's queue lengths, step 1; cpufreq's 200
    /// MHz slots), headed by `label`; the last slot holds all beyond.
    Linear { label: &'static str, step: u64 },
    /// One table of the sections' totals or counts (softirqs, hardirqs).
    Totals(Totals),
    /// Each section's share of samples above zero (runqlen -O): `runqocc:
    /// 12.50%`, or per CPU where the section has a `cpu` label.
    Occupancy,
}

/// A table of each section's total (or count), BCC's softirqs and
/// hardirqs without -d: `SOFTIRQ          TOTAL_usecs`, smallest first.
#[derive(Debug, Clone, Copy)]
pub struct Totals {
    /// The first column's header (`SOFTIRQ`).
    pub header: &'static str,
    /// The section label whose value names a row (`softirq`).
    pub label: &'static str,
    /// Counts (`TOTAL_count`), not the total of the values.
    pub counts: bool,
}

fn print_totals(
    out: &mut crate::output::Out,
    t: &Totals,
    unit: &str,
    sections: &[Section],
) -> io::Result<()> {
    let unit = if t.counts { "count" } else { unit };
    writeln!(out, "{:<16} {:>11}", t.header, format!("TOTAL_{unit}"))?;
    let mut rows: Vec<(u64, String)> = sections
        .iter()
        .map(|s| {
            let name = match s.labels.get(t.label) {
                Some(Value::String(n)) => crate::output::escape(n.as_bytes()).into_owned(),
                Some(v) => v.to_string(),
                None => "?".into(),
            };
            (if t.counts { s.count } else { s.total }, name)
        })
        .collect();
    rows.sort();
    for (value, name) in rows {
        writeln!(out, "{name:<16} {value:>11}")?;
    }
    Ok(())
}

/// Prints one interval's report: BCC's tables with their section headers,
/// or one JSON object per section (with the time, always).
pub fn print_report(
    out: &mut crate::output::Out,
    style: &Style,
    sections: &[Section],
) -> io::Result<()> {
    let time = crate::output::now_hms();
    if style.json {
        for s in sections {
            let mut labels = s.labels.clone();
            labels.insert("time".into(), time.clone().into());
            let mut v = to_json(
                labels,
                style.unit,
                &s.slots,
                s.count,
                s.total,
                s.percentiles.as_ref(),
            );
            match style.layout {
                Layout::Linear { step, .. } => linear_buckets(&mut v, &s.slots, step),
                Layout::Occupancy => linear_buckets(&mut v, &s.slots, 1),
                _ => {}
            }
            if let Layout::Occupancy = style.layout {
                v["occupancy"] = occupancy(s).into();
            }
            for (k, x) in &s.extra {
                v[k] = x.clone();
            }
            out.json(&v)?;
        }
        return Ok(());
    }
    writeln!(out)?;
    if style.timestamp {
        writeln!(out, "{time}")?;
    }
    match style.layout {
        Layout::Totals(t) => return print_totals(out, &t, style.unit, sections),
        Layout::Occupancy => return print_occupancy(out, sections),
        Layout::Log2 | Layout::Linear { .. } => {}
    }
    for s in sections {
        if let Some(title) = &s.title {
            writeln!(out, "\n{title}")?;
        }
        match style.layout {
            Layout::Linear { label, step } => print_linear(out, &s.slots, label, step)?,
            _ => print_log2(out, &s.slots, style.unit)?,
        }
        if style.extension {
            print_extension(out, s.count, s.total, style.unit)?;
        }
        if let Some(p) = &s.percentiles {
            print_percentiles(out, p, style.unit)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_bounds_match_bcc() {
        assert_eq!(log2_slot(0), 0);
        assert_eq!(log2_slot(1), 0);
        assert_eq!(log2_slot(64), 6);
        assert_eq!(log2_slot(4096), 12);
        assert_eq!(log2_bounds(0), (0, 1));
        assert_eq!(log2_bounds(1), (2, 3));
        assert_eq!(log2_bounds(10), (1024, 2047));
        for v in [0u64, 1, 2, 3, 4, 7, 8, 1000, 1 << 20, (1 << 21) - 1] {
            let (lo, hi) = log2_bounds(log2_slot(v));
            assert!(lo <= v && v <= hi, "{v}");
        }
    }

    #[test]
    fn fine_slots_cover_each_value_once_and_nest_in_log2_slots() {
        let mut last = 0;
        for v in (0u64..100_000).chain([1 << 30, (1 << 40) + 12345, (1 << 48) - 1]) {
            let s = fine_slot(v);
            let (lo, hi) = fine_bounds(s);
            assert!(lo <= v && v <= hi, "{v} not in slot {s} = [{lo}, {hi}]");
            assert!(s >= last || v > 100_000, "slots are monotonic");
            last = s;
            let (llo, lhi) = log2_bounds(log2_slot(v));
            assert!(llo <= lo && hi <= lhi, "{v}: fine slot crosses a log2 slot");
            // Relative error of the bucket is under 1/16.
            assert!(
                (hi - lo) as f64 <= lo as f64 / 16.0 + 0.5,
                "{v}: [{lo}, {hi}]"
            );
        }
        assert_eq!(fine_slot((1 << 48) - 1), FINE_SLOTS - 1);
    }

    #[test]
    fn percentiles_pick_the_bucket_holding_the_rank() {
        let mut fine = vec![0u32; FINE_SLOTS];
        for v in 1..=1000u64 {
            fine[fine_slot(v)] += 1;
        }
        let p = percentiles(&fine).unwrap();
        for (got, want) in [
            (p.p50, 500.0),
            (p.p90, 900.0),
            (p.p99, 990.0),
            (p.p999, 999.0),
        ] {
            assert!((got as f64 - want).abs() / want < 0.04, "{got} vs {want}");
        }
        assert!(p.max >= 1000 && p.max < 1000 + 1000 / 16 + 1);
        assert_eq!(percentiles(&vec![0u32; FINE_SLOTS]), None);
    }

    #[test]
    fn log2_table_is_byte_for_byte_bcc() {
        let mut slots = [0u32; 32];
        slots[1] = 1;
        slots[3] = 10;
        slots[4] = 20;
        slots[5] = 30;
        let mut out = Vec::new();
        print_log2(&mut out, &slots, "usecs").unwrap();
        let want = "     usecs               : count    distribution
         0 -> 1          : 0        |                                        |
         2 -> 3          : 1        |*                                       |
         4 -> 7          : 0        |                                        |
         8 -> 15         : 10       |*************                           |
        16 -> 31         : 20       |**************************              |
        32 -> 63         : 30       |****************************************|
";
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn empty_histograms_print_nothing() {
        let mut out = Vec::new();
        print_log2(&mut out, &[0; 32], "usecs").unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn json_lists_non_empty_buckets_with_bounds() {
        let mut slots = [0u32; 32];
        slots[2] = 7;
        let mut labels = Map::new();
        labels.insert("disk".into(), "vda".into());
        let v = to_json(labels, "usecs", &slots, 7, 35, None);
        assert_eq!(
            v,
            json!({"disk": "vda", "unit": "usecs", "count": 7, "total": 35,
                   "buckets": [{"low": 4, "high": 7, "count": 7}]})
        );
    }
}
