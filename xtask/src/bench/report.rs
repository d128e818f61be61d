//! The results of a tool's rounds: a table on the console, and its entry
//! in target/bench/results.json (README.md's table is made from that: readme.rs).

use std::fs;
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde_json::{json, Map, Value};

use super::bpf_stats;
use super::measure::Run;
use super::peers::{Role, Unavailable};
use super::stats::Spread;
use super::workloads::Unit;

/// One condition over all rounds, the runs in round order.
pub struct ConditionResult {
    pub label: String,
    pub role: Role,
    pub how: String,
    pub command: Option<String>,
    pub startup_by: Option<&'static str>,
    pub runs: Vec<Run>,
    /// Traced over untraced, each within its round.
    pub slowdowns: Vec<f64>,
    /// Its BPF programs' counters from the runs made with
    /// kernel.bpf_stats_enabled on (after the timed rounds).
    pub bpf_runs: Vec<Vec<bpf_stats::ProgStat>>,
}

impl ConditionResult {
    fn figure(&self, f: impl Fn(&Run) -> Option<f64>) -> Option<Spread> {
        let values: Vec<f64> = self.runs.iter().filter_map(f).collect();
        // A figure missing from some round is not a figure across rounds.
        if values.len() != self.runs.len() {
            return None;
        }
        Spread::of(&values)
    }

    fn value(&self) -> Option<Spread> {
        self.figure(|r| Some(r.value))
    }
    fn slowdown(&self) -> Option<Spread> {
        Spread::of(&self.slowdowns)
    }
    fn startup(&self) -> Option<Spread> {
        self.figure(|r| r.startup_ms)
    }
    fn cpu(&self) -> Option<Spread> {
        self.figure(|r| r.cpu_ms)
    }
    fn rss_mib(&self) -> Option<Spread> {
        self.figure(|r| r.peak_rss_kib.map(|k| k as f64 / 1024.0))
    }
    fn exit(&self) -> Option<Spread> {
        self.figure(|r| r.exit_ms)
    }
    fn events(&self) -> Option<Spread> {
        self.figure(|r| r.events_seen.map(|e| e as f64))
    }
    /// Each of its BPF programs' ns a run, by name, across rounds.
    fn bpf_each(&self) -> Vec<(String, Spread)> {
        let runs: Vec<&[bpf_stats::ProgStat]> = self.bpf_runs.iter().map(Vec::as_slice).collect();
        bpf_stats::ns_a_run(&runs)
    }
    /// `119+137`: each program's median ns a run.
    fn bpf_figure(&self) -> Option<String> {
        bpf_stats::figure(&self.bpf_each())
    }

    fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = Vec::new();
        for (round, run) in self.runs.iter().enumerate() {
            for n in &run.notes {
                notes.push(format!("round {}: {n}", round + 1));
            }
        }
        notes
    }
}

pub struct ToolResult {
    pub tool: String,
    pub workload: String,
    pub unit: Unit,
    pub sent: Option<u64>,
    /// The conditions that ran in every round.
    pub conditions: Vec<ConditionResult>,
    pub unavailable: Vec<Unavailable>,
    /// The order the conditions ran in, per round.
    pub order: Vec<Vec<String>>,
    pub extras: Option<Value>,
    /// The extras in words, as their measuring module describes them.
    pub extra_lines: Vec<String>,
}

impl ToolResult {
    fn ours(&self) -> Option<&ConditionResult> {
        self.conditions.iter().find(|c| c.role == Role::Ours)
    }

    /// The peer with the lowest median slowdown.
    fn best_peer(&self) -> Option<&ConditionResult> {
        self.conditions
            .iter()
            .filter(|c| c.role == Role::Peer)
            .filter_map(|c| Some((c, c.slowdown()?.median)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(c, _)| c)
    }

    /// Ours over the best peer, figure by figure, paired within each round.
    fn ours_vs_best(&self) -> Option<(String, Map<String, Value>)> {
        let (ours, peer) = (self.ours()?, self.best_peer()?);
        let mut ratios = Map::new();
        let mut pair = |name: &str, f: &dyn Fn(&Run, f64) -> Option<f64>| {
            let values: Option<Vec<f64>> = ours
                .runs
                .iter()
                .zip(&peer.runs)
                .zip(ours.slowdowns.iter().zip(&peer.slowdowns))
                .map(|((o, p), (so, sp))| {
                    // A peer's 0 (no CPU time at all) makes no ratio.
                    let (o, p) = (f(o, *so)?, f(p, *sp)?);
                    (p > 0.0).then(|| o / p)
                })
                .collect();
            if let Some(s) = values.as_deref().and_then(Spread::of) {
                ratios.insert(name.into(), s.to_json());
            }
        };
        pair("slowdown", &|_, s| Some(s));
        pair("startup_ms", &|r, _| r.startup_ms);
        pair("cpu_ms", &|r, _| r.cpu_ms);
        pair("peak_rss", &|r, _| r.peak_rss_kib.map(|k| k as f64));
        pair("exit_ms", &|r, _| r.exit_ms);
        Some((peer.label.clone(), ratios))
    }

    pub fn to_json(&self, meta: &Meta) -> Value {
        let conditions: Vec<Value> = self
            .conditions
            .iter()
            .map(|c| {
                let spread = |s: Option<Spread>| s.map(|s| s.to_json());
                json!({
                    "label": c.label,
                    "role": c.role.name(),
                    "how": c.how,
                    "command": c.command,
                    "startup_by": c.startup_by,
                    "workload": spread(c.value()),
                    "slowdown": spread(c.slowdown()),
                    "startup_ms": spread(c.startup()),
                    "cpu_ms": spread(c.cpu()),
                    "peak_rss_mib": spread(c.rss_mib()),
                    "exit_ms": spread(c.exit()),
                    "events_seen": spread(c.events()),
                    "notes": c.notes(),
                    "bpf_ns_a_run": c.bpf_figure(),
                    "bpf_ns_a_run_by_program": c
                        .bpf_each()
                        .into_iter()
                        .map(|(name, s)| (name, s.to_json()))
                        .collect::<Map<String, Value>>(),
                    "bpf_programs_by_stats_run": c
                        .bpf_runs
                        .iter()
                        .map(|r| r.iter().map(|p| p.to_json()).collect())
                        .collect::<Vec<Vec<Value>>>(),
                })
            })
            .collect();
        let (best, vs) = match self.ours_vs_best() {
            Some((label, ratios)) => (Some(label), Value::Object(ratios)),
            None => (None, Value::Null),
        };
        json!({
            "kernel": meta.kernel,
            "date": meta.date,
            "rounds": meta.rounds,
            "workload": self.workload,
            "unit": self.unit.label(),
            "events_sent_per_round": self.sent,
            "round_order": self.order,
            "conditions": conditions,
            "not_run": self
                .unavailable
                .iter()
                .map(|u| json!({ "label": u.label, "reason": u.reason }))
                .collect::<Vec<_>>(),
            "best_peer": best,
            "ours_vs_best_peer": vs,
            "extras": self.extras,
        })
    }

    /// The console table: one row per condition, then ours against the best peer.
    pub fn print(&self, rounds: usize) {
        println!();
        println!(
            "== {}: {} ({} round{}; median [min–max])",
            self.tool,
            self.workload,
            rounds,
            if rounds == 1 { "" } else { "s" }
        );
        println!(
            "   {:<26} {:>24} {:>20} {:>20} {:>20} {:>18} {:>18} {:>20} {:>16}",
            "condition",
            format!(
                "workload, {}",
                if self.unit == Unit::Millis {
                    "ms"
                } else {
                    "ns/pair"
                }
            ),
            "slowdown",
            "start-up ms",
            "tool CPU ms",
            "peak RSS MiB",
            "exit ms",
            "events seen/sent",
            "BPF ns a run"
        );
        let show = |s: Option<Spread>, d: usize| s.map_or("-".to_string(), |s| s.show(d));
        for c in &self.conditions {
            let events = match (c.events(), self.sent) {
                (Some(seen), Some(sent)) => format!("{}/{sent}", seen.show(0)),
                (Some(seen), None) => format!("{} seen", seen.show(0)),
                _ => "-".into(),
            };
            println!(
                "   {:<26} {:>24} {:>20} {:>20} {:>20} {:>18} {:>18} {:>20} {:>16}",
                c.label,
                show(c.value(), if self.unit == Unit::Millis { 1 } else { 0 }),
                if c.role == Role::Untraced {
                    "1".into()
                } else {
                    show(c.slowdown(), 2)
                },
                show(c.startup(), 0),
                show(c.cpu(), 1),
                show(c.rss_mib(), 1),
                show(c.exit(), 0),
                events,
                c.bpf_figure().unwrap_or_else(|| "-".into())
            );
        }
        for c in &self.conditions {
            if c.role != Role::Untraced {
                println!("   {}: {}", c.label, c.how);
            }
            for n in c.notes() {
                println!("   {}: note: {n}", c.label);
            }
        }
        for u in &self.unavailable {
            println!("   {}: does not run here: {}", u.label, u.reason);
        }
        match self.ours_vs_best() {
            Some((peer, ratios)) => {
                let figures: Vec<String> = RATIOS
                    .iter()
                    .filter_map(|(k, name)| {
                        Some(format!(
                            "{name} {}",
                            Spread::from_json(ratios.get(*k)?)?.show(2)
                        ))
                    })
                    .collect();
                println!(
                    "   ours / {peer} (best peer), per round: {} (below 1 is better for ours)",
                    figures.join(", ")
                );
            }
            None => println!("   no peer ran: ours is measured against untraced only"),
        }
        for line in &self.extra_lines {
            println!("   {line}");
        }
    }
}

/// The figures compared between ours and the best peer: JSON key, name.
const RATIOS: &[(&str, &str)] = &[
    ("slowdown", "slowdown"),
    ("startup_ms", "start-up"),
    ("cpu_ms", "tool CPU"),
    ("peak_rss", "peak RSS"),
    ("exit_ms", "exit"),
];

/// About the run, stored with each tool's results.
pub struct Meta {
    pub kernel: String,
    pub date: String,
    pub rounds: usize,
    pub cpus: usize,
}

impl Meta {
    pub fn now(rounds: usize) -> Meta {
        let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let date = std::process::Command::new("date")
            .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
        Meta {
            kernel,
            date,
            rounds,
            cpus,
        }
    }
}

pub fn results_path() -> PathBuf {
    crate::root_dir().join("target/bench/results.json")
}

/// Writes this run's tools into results.json, keeping the other tools'
/// entries from earlier runs (each entry has its own date and rounds).
pub fn save(results: &[Value], names: &[String], meta: &Meta, run: Value) -> Result<PathBuf> {
    let path = results_path();
    let mut tools = fs::read_to_string(&path)
        .ok()
        .and_then(|s| serde_json::from_str::<Value>(&s).ok())
        .and_then(|v| v.get("tools").and_then(Value::as_object).cloned())
        .unwrap_or_default();
    for (name, result) in names.iter().zip(results) {
        tools.insert(name.clone(), result.clone());
    }
    let doc = json!({
        "kernel": meta.kernel,
        "date": meta.date,
        "cpus": meta.cpus,
        "rounds": meta.rounds,
        "last_run": run,
        "tools": tools,
    });
    fs::create_dir_all(path.parent().unwrap())?;
    fs::write(&path, serde_json::to_string_pretty(&doc)? + "\n")
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}
