//! `cargo xtask bench-table`: README.md's performance table, between its
//! `<!-- bench:begin -->` and `<!-- bench:end -->` markers, from
//! target/bench/results.json.

use std::fs;

use anyhow::{Context, Result};
use serde_json::Value;

use super::report::results_path;
use super::stats::Spread;
use super::workloads::Unit;

const BEGIN: &str = "<!-- bench:begin -->";
const END: &str = "<!-- bench:end -->";

/// `cargo xtask bench-table`: README.md's table from results.json.
pub fn bench_table() -> Result<()> {
    let path = results_path();
    let text = fs::read_to_string(&path)
        .with_context(|| format!("reading {} (run cargo xtask bench first)", path.display()))?;
    let doc: Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let table = markdown_table(&doc)?;
    let readme = crate::root_dir().join("README.md");
    let old = fs::read_to_string(&readme)?;
    let new = crate::readme::replace_between(&old, BEGIN, END, table.trim_end())?;
    if new == old {
        eprintln!("xtask: README.md's performance table is up to date");
    } else {
        fs::write(&readme, new)?;
        eprintln!(
            "xtask: README.md's performance table regenerated from {}",
            path.display()
        );
    }
    Ok(())
}

/// The table: per tool, ours against the best peer; figures are medians
/// with the range across rounds for the slowdowns.
fn markdown_table(doc: &Value) -> Result<String> {
    let tools = doc["tools"]
        .as_object()
        .context("results.json has no tools")?;
    let mut out = String::new();
    let mut runs: Vec<String> = tools
        .values()
        .map(|t| {
            format!(
                "{} round{} on Linux {}, {}",
                t["rounds"],
                if t["rounds"].as_u64() == Some(1) {
                    ""
                } else {
                    "s"
                },
                t["kernel"].as_str().unwrap_or("?"),
                t["date"].as_str().unwrap_or("?").get(..10).unwrap_or("?")
            )
        })
        .collect();
    runs.sort();
    runs.dedup();
    out.push_str(&format!(
        "Medians [min–max] of {} ({} CPUs), interleaved; slowdown is the workload's time \
         traced over untraced in the same round. Where two figures stand, they are \
         ours / the best peer's.\n\n",
        runs.join("; "),
        doc["cpus"]
    ));
    out.push_str("| tool | workload | slowdown, ours | best peer's slowdown | start-up ms | tool CPU ms | peak RSS MiB | exit ms |\n");
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    let mut not_run = Vec::new();
    for (name, t) in tools {
        let conds = t["conditions"].as_array().cloned().unwrap_or_default();
        let find = |label: &str| conds.iter().find(|c| c["label"] == label);
        let Some(ours) = find("ours") else { continue };
        let peer = t["best_peer"].as_str().and_then(find);
        let spread = |c: &Value, k: &str| Spread::from_json(&c[k]);
        // Per-pair costs are thousands of times the bare malloc+free: the
        // cost itself says more than the ratio.
        let per_pair = t["unit"] == Unit::NsPerPair.label();
        let slow = |c: &Value| match (spread(c, "slowdown"), spread(c, "workload")) {
            (Some(s), Some(w)) if per_pair => {
                let us: Vec<f64> = w.values.iter().map(|ns| ns / 1e3).collect();
                let us = Spread::of(&us).unwrap_or(w);
                format!("{} µs per pair ({:.0}×)", us.show(2), s.median)
            }
            (Some(s), _) => s.show_as(2, "×"),
            _ => "-".into(),
        };
        let pair = |k: &str, d: usize| {
            let m =
                |c: &Value| spread(c, k).map_or("-".to_string(), |s| format!("{:.d$}", s.median));
            match peer {
                Some(p) => format!("{} / {}", m(ours), m(p)),
                None => m(ours),
            }
        };
        let best = match peer {
            Some(p) => format!("{} {}", slow(p), p["label"].as_str().unwrap_or("")),
            None => "no peer runs here".into(),
        };
        let f = &t["foreign_programs"];
        let beside = [&f["at_start"], &f["appeared_during_run"]]
            .iter()
            .any(|l| l.as_array().is_some_and(|a| !a.is_empty()));
        let tool_cell = if beside {
            format!("{name} (beside foreign tracing programs: --allow-foreign)")
        } else {
            name.clone()
        };
        out.push_str(&format!(
            "| {tool_cell} | {} | {} | {best} | {} | {} | {} | {} |\n",
            t["workload"].as_str().unwrap_or(""),
            slow(ours),
            pair("startup_ms", 0),
            pair("cpu_ms", 1),
            pair("peak_rss_mib", 1),
            pair("exit_ms", 0),
        ));
        for n in t["not_run"].as_array().into_iter().flatten() {
            not_run.push(format!("{name}/{}", n["label"].as_str().unwrap_or("?")));
        }
    }
    if !not_run.is_empty() {
        out.push_str(&format!(
            "\nDo not run here (reasons in target/bench/results.json): {}.\n",
            not_run.join(", ")
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn table_shows_ours_against_the_best_peer() {
        let s = |v: &[f64]| Spread::of(v).unwrap().to_json();
        let doc = json!({
            "cpus": 2,
            "tools": { "opensnoop": {
                "rounds": 3, "kernel": "6.18", "date": "2026-01-02T00:00:00Z",
                "workload": "open loop",
                "best_peer": "libbpf-tools",
                "conditions": [
                    { "label": "ours", "slowdown": s(&[1.3, 1.4, 1.5]), "startup_ms": s(&[20.0, 21.0, 22.0]),
                      "cpu_ms": s(&[10.0, 10.0, 10.0]), "peak_rss_mib": s(&[5.0, 5.2, 5.4]), "exit_ms": s(&[3.0, 3.0, 3.0]) },
                    { "label": "libbpf-tools", "slowdown": s(&[5.0, 5.3, 5.4]), "startup_ms": s(&[19.0, 19.0, 19.0]),
                      "cpu_ms": s(&[90.0, 90.0, 90.0]), "peak_rss_mib": s(&[13.2, 13.2, 13.2]), "exit_ms": s(&[4.0, 4.0, 4.0]) }
                ],
                "not_run": [ { "label": "bcc", "reason": "kprobes" } ]
            } }
        });
        let table = markdown_table(&doc).unwrap();
        assert!(table.contains("| opensnoop | open loop | 1.40× [1.30–1.50] | 5.30× [5.00–5.40] libbpf-tools | 21 / 19 | 10.0 / 90.0 | 5.2 / 13.2 | 3 / 4 |"), "{table}");
        assert!(
            table.contains("3 rounds on Linux 6.18, 2026-01-02"),
            "{table}"
        );
        assert!(table.contains("opensnoop/bcc"), "{table}");
    }
}
