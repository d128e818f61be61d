//! The BPF programs' own run time: kernel.bpf_stats_enabled makes the
//! kernel count each program's runs and the nanoseconds they took
//! (`run_cnt`, `run_time_ns` in bpftool's listing); the bench turns it on
//! for its run and reads the tracer's programs after each workload.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::foreign;
use super::stats::Spread;

const SYSCTL: &str = "/proc/sys/kernel/bpf_stats_enabled";

/// kernel.bpf_stats_enabled set to a value; its old value back on drop, on
/// every return or panic (not on a signal that kills the bench: the next
/// bench sets it to 0 for its timed rounds in any case).
pub struct StatsSysctl {
    old: String,
}

impl StatsSysctl {
    /// On: for the runs that measure the programs' run time.
    pub fn enable() -> Result<StatsSysctl> {
        StatsSysctl::set("1")
    }

    /// Off: for the timed rounds (two clock reads per program run else).
    pub fn disable() -> Result<StatsSysctl> {
        StatsSysctl::set("0")
    }

    fn set(value: &str) -> Result<StatsSysctl> {
        let old = fs::read_to_string(SYSCTL).with_context(|| format!("reading {SYSCTL}"))?;
        fs::write(SYSCTL, value).with_context(|| format!("writing {value} to {SYSCTL}"))?;
        Ok(StatsSysctl {
            old: old.trim().to_string(),
        })
    }
}

impl Drop for StatsSysctl {
    fn drop(&mut self) {
        if let Err(e) = fs::write(SYSCTL, &self.old) {
            eprintln!("bench: could not put {SYSCTL} back to {}: {e}", self.old);
        }
    }
}

/// One program's counters at the end of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgStat {
    /// The kernel's name for it (15 bytes at most); a second program of
    /// the same name in the run is `name#2`, in the order of their ids.
    pub name: String,
    pub run_time_ns: u64,
    pub run_cnt: u64,
}

impl ProgStat {
    pub fn to_json(&self) -> Value {
        json!({ "name": self.name, "run_time_ns": self.run_time_ns, "run_cnt": self.run_cnt })
    }
}

/// The ids loaded now: taken before the tracer starts.
pub fn loaded_ids() -> BTreeSet<u32> {
    foreign::loaded().iter().map(|p| p.id).collect()
}

/// The counters of the programs loaded since `before` (the tracer's).
pub fn since(before: &BTreeSet<u32>) -> Vec<ProgStat> {
    named(
        foreign::loaded()
            .into_iter()
            .filter(|p| !before.contains(&p.id))
            .map(|p| (p.id, p.name, p.run_time_ns, p.run_cnt))
            .collect(),
    )
}

/// Names made unique within a run (bpftrace's are truncated alike).
fn named(mut progs: Vec<(u32, String, u64, u64)>) -> Vec<ProgStat> {
    progs.sort_by_key(|p| p.0);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    progs
        .into_iter()
        .map(|(_, name, run_time_ns, run_cnt)| {
            let n = seen.entry(name.clone()).or_default();
            *n += 1;
            let name = if *n == 1 { name } else { format!("{name}#{n}") };
            ProgStat {
                name,
                run_time_ns,
                run_cnt,
            }
        })
        .collect()
}

/// Per program name, in name order, the ns a run across rounds (`runs`:
/// each round's counters). Left out of a round: a program that did not run,
/// and one that ran less than a hundredth as often as that round's busiest
/// (a new task's first wakeup, an exec: a few costly runs that are no part
/// of the cost per event).
pub fn ns_a_run(runs: &[&[ProgStat]]) -> Vec<(String, Spread)> {
    let mut by_name: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for r in runs {
        let most = r.iter().map(|p| p.run_cnt).max().unwrap_or(0);
        for p in r
            .iter()
            .filter(|p| p.run_cnt > 0 && p.run_cnt.saturating_mul(100) >= most)
        {
            by_name
                .entry(&p.name)
                .or_default()
                .push(p.run_time_ns as f64 / p.run_cnt as f64);
        }
    }
    by_name
        .into_iter()
        .filter_map(|(name, v)| Some((name.to_string(), Spread::of(&v)?)))
        .collect()
}

/// The figure from counters as results.json keeps them (a list per run of
/// `{name, run_time_ns, run_cnt}`); None where there are none.
pub fn figure_of_json(runs: &Value) -> Option<String> {
    let runs: Vec<Vec<ProgStat>> = runs
        .as_array()?
        .iter()
        .map(|run| {
            run.as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| {
                    Some(ProgStat {
                        name: p["name"].as_str()?.to_string(),
                        run_time_ns: p["run_time_ns"].as_u64()?,
                        run_cnt: p["run_cnt"].as_u64()?,
                    })
                })
                .collect()
        })
        .collect();
    let slices: Vec<&[ProgStat]> = runs.iter().map(Vec::as_slice).collect();
    figure(&ns_a_run(&slices))
}

/// `119+137`: each program's median ns a run, rounded, in name order.
pub fn figure(per_program: &[(String, Spread)]) -> Option<String> {
    if per_program.is_empty() {
        return None;
    }
    let each: Vec<String> = per_program
        .iter()
        .map(|(_, s)| format!("{:.0}", s.median))
        .collect();
    Some(each.join("+"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(name: &str, run_time_ns: u64, run_cnt: u64) -> ProgStat {
        ProgStat {
            name: name.into(),
            run_time_ns,
            run_cnt,
        }
    }

    #[test]
    fn programs_of_one_name_are_told_apart_by_id() {
        let progs = named(vec![
            (9, "sys_exit".into(), 1, 1),
            (7, "tracepoint_raw_".into(), 2, 2),
            (8, "tracepoint_raw_".into(), 3, 3),
        ]);
        let names: Vec<&str> = progs.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["tracepoint_raw_", "tracepoint_raw_#2", "sys_exit"]);
        assert_eq!(progs[1].run_time_ns, 3);
    }

    #[test]
    fn figure_is_each_programs_median_ns_a_run_in_name_order() {
        let rounds = [
            vec![stat("floor_exit", 1370, 10), stat("floor_enter", 1190, 10)],
            vec![stat("floor_exit", 1500, 10), stat("floor_enter", 1000, 10)],
            vec![stat("floor_exit", 1300, 10), stat("floor_enter", 1200, 10)],
        ];
        let runs: Vec<&[ProgStat]> = rounds.iter().map(Vec::as_slice).collect();
        let each = ns_a_run(&runs);
        assert_eq!(each[0].0, "floor_enter");
        assert_eq!(figure(&each).as_deref(), Some("119+137"));
    }

    #[test]
    fn rare_programs_are_left_out_of_the_figure() {
        let round = [
            stat("rq_switch", 1960, 10),
            stat("rq_wakeup", 1820, 10),
            stat("rq_wakeup_new", 7121, 2),
        ];
        let round_big = [
            stat("rq_switch", 196_000, 1000),
            stat("rq_wakeup_new", 7121, 2),
        ];
        assert_eq!(
            figure(&ns_a_run(&[&round[..]])).as_deref(),
            Some("196+182+3560")
        );
        assert_eq!(figure(&ns_a_run(&[&round_big[..]])).as_deref(), Some("196"));
    }

    #[test]
    fn figure_from_stored_counters() {
        let runs = json!([[
            { "name": "b", "run_time_ns": 2000, "run_cnt": 10 },
            { "name": "a", "run_time_ns": 1000, "run_cnt": 10 },
            { "name": "new", "run_time_ns": 7000, "run_cnt": 0 }
        ]]);
        assert_eq!(figure_of_json(&runs).as_deref(), Some("100+200"));
        assert_eq!(figure_of_json(&json!(null)), None);
        assert_eq!(figure_of_json(&json!([[]])), None);
    }

    #[test]
    fn programs_that_never_ran_make_no_figure() {
        let round = [stat("BEGIN", 0, 0)];
        assert!(ns_a_run(&[&round[..]]).is_empty());
        assert_eq!(figure(&[]), None);
    }
}
