//! `cargo xtask bench-table`: README.md's performance table, between its
//! `<!-- bench:begin -->` and `<!-- bench:end -->` markers, from
//! target/bench/results.json.

use std::fs;

use anyhow::{Context, Result};
use serde_json::Value;

use super::bpf_stats;
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
    // The last run's tools (results.json keeps earlier runs' too, whose
    // rows README has already).
    let last: Vec<String> = doc["last_run"]["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let mut doc = doc;
    if let Some(tools) = doc["tools"].as_object_mut() {
        if !last.is_empty() {
            tools.retain(|name, _| last.contains(name));
        }
    }
    let table = markdown_table(&doc)?;
    let readme = crate::root_dir().join("README.md");
    let old = fs::read_to_string(&readme)?;
    let kept = old
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .map_or("", |(t, _)| t.trim());
    let benched: Vec<&str> = doc["tools"]
        .as_object()
        .map(|t| t.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let table = merged(kept, &table, &benched);
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

/// README's table with the rows of the tools results.json holds
/// (`benched`, in `fresh`) put in: the other tools' rows, their runs in the
/// heading and their peers that do not run are kept (results.json holds
/// the tools benched on this machine since its target/ was made, not
/// every tool's).
fn merged(kept: &str, fresh: &str, benched: &[&str]) -> String {
    const RUNS: &str = "Medians [min–max] of ";
    const CPUS: &str = " CPUs), interleaved";
    const NOT_RUN: &str = "Do not run here (reasons in target/bench/results.json): ";
    let tool_of = |row: &str| -> String {
        let cell = row.trim_start_matches('|').split('|').next().unwrap_or("");
        cell.split_whitespace().next().unwrap_or("").to_string()
    };
    let is_row = |l: &&str| l.starts_with("| ") && !l.starts_with("| tool |");
    let heading = |t: &str| t.lines().find(|l| l.starts_with(RUNS)).map(str::to_string);
    let (Some(old_head), Some(new_head)) = (heading(kept), heading(fresh)) else {
        return fresh.to_string();
    };
    // This run's clause ("5 rounds on Linux …, DATE"), after the kept ones,
    // naming its tools.
    let clause = |h: &str| -> Option<(usize, String)> {
        let end = h[..h.find(CPUS)?].rfind(" (")?;
        Some((end, h.get(RUNS.len()..end)?.to_string()))
    };
    // An earlier clause keeps the tools it names that were not benched
    // again; one left naming none goes.
    let without_benched = |runs: &str| -> Vec<String> {
        runs.split("; ")
            .filter_map(
                |c| match c.strip_suffix(')').and_then(|c| c.rsplit_once(" (")) {
                    Some((run, names)) => {
                        let left: Vec<&str> =
                            names.split(", ").filter(|n| !benched.contains(n)).collect();
                        (!left.is_empty()).then(|| format!("{run} ({})", left.join(", ")))
                    }
                    None => Some(c.to_string()),
                },
            )
            .collect()
    };
    let head = match (clause(&old_head), clause(&new_head)) {
        (Some((end, old_runs)), Some((_, runs))) => {
            let mut all = without_benched(&old_runs);
            all.push(format!("{runs} ({})", benched.join(", ")));
            format!("{RUNS}{}{}", all.join("; "), &old_head[end..])
        }
        _ => new_head,
    };
    let fresh_rows: Vec<(String, &str)> = fresh
        .lines()
        .filter(is_row)
        .map(|l| (tool_of(l), l))
        .collect();
    let not_run = |t: &str| -> Vec<String> {
        t.lines()
            .find_map(|l| l.strip_prefix(NOT_RUN))
            .map(|l| {
                l.trim_end_matches('.')
                    .split(", ")
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut skipped: Vec<String> = not_run(kept)
        .into_iter()
        .filter(|n| !benched.iter().any(|b| n.starts_with(&format!("{b}/"))))
        .collect();
    skipped.extend(not_run(fresh));
    // The kept text line by line (its notes between the table and the
    // list of peers that do not run stay), each benched tool's row
    // replaced where it stood, a new tool's after the last row.
    let lines: Vec<&str> = kept.lines().collect();
    let last_row = lines.iter().rposition(&is_row).unwrap_or(lines.len());
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if line.starts_with(RUNS) {
            out += &head;
        } else if line.starts_with(NOT_RUN) {
            out += &format!("{NOT_RUN}{}.", skipped.join(", "));
        } else if is_row(line) && benched.contains(&tool_of(line).as_str()) {
            match fresh_rows.iter().find(|(t, _)| *t == tool_of(line)) {
                Some((_, row)) => out += row,
                None => continue,
            }
        } else {
            out += line;
        }
        out.push('\n');
        if i == last_row {
            for (tool, row) in &fresh_rows {
                if !lines.iter().any(|l| is_row(l) && tool_of(l) == *tool) {
                    out += row;
                    out.push('\n');
                }
            }
        }
    }
    out
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
         ours / the best peer's. BPF ns a run: each BPF program's run time over its \
         runs (kernel.bpf_stats_enabled), in the programs' name order. Other peers \
         include the floors (empty programs), which are never the best peer.\n\n",
        runs.join("; "),
        doc["cpus"]
    ));
    out.push_str("| tool | workload | slowdown, ours | best peer's slowdown | start-up ms | tool CPU ms | peak RSS MiB | exit ms | BPF ns a run, each program | other peers |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    let mut not_run = Vec::new();
    for (name, t) in tools {
        let conds = t["conditions"].as_array().cloned().unwrap_or_default();
        let find = |label: &str| conds.iter().find(|c| c["label"] == label);
        let Some(ours) = find("ours") else { continue };
        let peer = t["best_peer"].as_str().and_then(find);
        let spread = |c: &Value, k: &str| Spread::from_json(&c[k]);
        let per_pair = t["unit"] == Unit::NsPerPair.label();
        let slow = |c: &Value| slowdown_cell(c, per_pair);
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
            "| {tool_cell} | {} | {} | {best} | {} | {} | {} | {} | {} | {} |\n",
            t["workload"].as_str().unwrap_or(""),
            slow(ours),
            pair("startup_ms", 0),
            pair("cpu_ms", 1),
            pair("peak_rss_mib", 1),
            pair("exit_ms", 0),
            bpf_cell(ours, peer),
            other_peers(&conds, peer, per_pair),
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

/// A condition's slowdown: `1.40× [1.30–1.50]`. Per-pair costs are
/// thousands of times the bare malloc+free: there the cost itself says
/// more than the ratio.
fn slowdown_cell(c: &Value, per_pair: bool) -> String {
    let spread = |k: &str| Spread::from_json(&c[k]);
    match (spread("slowdown"), spread("workload")) {
        (Some(s), Some(w)) if per_pair => {
            let us: Vec<f64> = w.values.iter().map(|ns| ns / 1e3).collect();
            let us = Spread::of(&us).unwrap_or(w);
            format!("{} µs per pair ({:.0}×)", us.show(2), s.median)
        }
        (Some(s), _) => s.show_as(2, "×"),
        _ => "-".into(),
    }
}

/// Each BPF program's ns a run, ours / the best peer's: `119+137 / 240`;
/// `–` where a condition has none (results from before it was measured).
fn bpf_cell(ours: &Value, peer: Option<&Value>) -> String {
    // From the stored counters where there are some (the figure's rule may
    // have changed since), else the figure stored.
    let figure = |c: &Value| {
        bpf_stats::figure_of_json(&c["bpf_programs_by_stats_run"])
            .or_else(|| c["bpf_ns_a_run"].as_str().map(str::to_string))
            .unwrap_or_else(|| "–".into())
    };
    match peer {
        Some(p) => format!("{} / {}", figure(ours), figure(p)),
        None => figure(ours),
    }
}

/// The peers and floors that ran, but the best peer: `2.12× [2.00–2.30]
/// libbpf-tools; 1.40× [...] floor: ...`, in the tool's order; `–` if none.
fn other_peers(conds: &[Value], best: Option<&Value>, per_pair: bool) -> String {
    let others: Vec<String> = conds
        .iter()
        .filter(|c| c["role"] == "peer" || c["role"] == "reference")
        .filter(|c| best.is_none_or(|b| b["label"] != c["label"]))
        .map(|c| {
            format!(
                "{} {}",
                slowdown_cell(c, per_pair),
                c["label"].as_str().unwrap_or("?")
            )
        })
        .collect();
    if others.is_empty() {
        "–".into()
    } else {
        others.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn table_shows_ours_against_the_best_peer_and_every_other_peer() {
        let s = |v: &[f64]| Spread::of(v).unwrap().to_json();
        let doc = json!({
            "cpus": 2,
            "tools": { "opensnoop": {
                "rounds": 3, "kernel": "6.18", "date": "2026-01-02T00:00:00Z",
                "workload": "open loop",
                "best_peer": "libbpf-tools",
                "conditions": [
                    { "label": "untraced", "role": "untraced" },
                    { "label": "ours", "role": "ours", "slowdown": s(&[1.3, 1.4, 1.5]), "startup_ms": s(&[20.0, 21.0, 22.0]),
                      "cpu_ms": s(&[10.0, 10.0, 10.0]), "peak_rss_mib": s(&[5.0, 5.2, 5.4]), "exit_ms": s(&[3.0, 3.0, 3.0]),
                      "bpf_ns_a_run": "119+137" },
                    { "label": "libbpf-tools", "role": "peer", "slowdown": s(&[5.0, 5.3, 5.4]), "startup_ms": s(&[19.0, 19.0, 19.0]),
                      "cpu_ms": s(&[90.0, 90.0, 90.0]), "peak_rss_mib": s(&[13.2, 13.2, 13.2]), "exit_ms": s(&[4.0, 4.0, 4.0]),
                      "bpf_ns_a_run": "240" },
                    { "label": "bcc", "role": "peer", "slowdown": s(&[6.0, 6.2, 6.1]) },
                    { "label": "floor: empty tp_btf programs", "role": "reference", "slowdown": s(&[1.1, 1.2, 1.15]),
                      "bpf_ns_a_run": "18+19" }
                ],
                "not_run": [ { "label": "bpftrace", "reason": "kprobes" } ]
            } }
        });
        let table = markdown_table(&doc).unwrap();
        assert!(table.contains("| opensnoop | open loop | 1.40× [1.30–1.50] | 5.30× [5.00–5.40] libbpf-tools | 21 / 19 | 10.0 / 90.0 | 5.2 / 13.2 | 3 / 4 | 119+137 / 240 | 6.10× [6.00–6.20] bcc; 1.15× [1.10–1.20] floor: empty tp_btf programs |"), "{table}");
        assert!(
            table.contains("3 rounds on Linux 6.18, 2026-01-02"),
            "{table}"
        );
        assert!(table.contains("opensnoop/bpftrace"), "{table}");
    }

    #[test]
    fn a_run_of_some_tools_replaces_their_rows_and_keeps_the_others() {
        let kept = "Medians [min–max] of 3 rounds on Linux 6.1, 2026-01-01 (biotop, opensnoop); 2 rounds on Linux 6.1, 2026-01-01 (opensnoop) (2 CPUs), interleaved; rest.\n\n\
                    | tool | workload |\n|---|---|\n| biotop | fio | 1.0× |\n| opensnoop | old | 9× |\n\n\
                    Do not run here (reasons in target/bench/results.json): biotop/bcc, opensnoop/bcc.";
        let fresh = "Medians [min–max] of 5 rounds on Linux 6.18, 2026-02-02 (2 CPUs), interleaved; rest.\n\n\
                     | tool | workload |\n|---|---|\n| opensnoop | new | 1× |\n| zsnoop | z | 2× |\n\n\
                     Do not run here (reasons in target/bench/results.json): zsnoop/bpftrace.";
        let m = merged(kept, fresh, &["opensnoop", "zsnoop"]);
        assert!(m.starts_with("Medians [min–max] of 3 rounds on Linux 6.1, 2026-01-01 (biotop); 5 rounds on Linux 6.18, 2026-02-02 (opensnoop, zsnoop) (2 CPUs), interleaved"), "{m}");
        let rows: Vec<&str> = m
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| tool"))
            .collect();
        assert_eq!(
            rows,
            [
                "| biotop | fio | 1.0× |",
                "| opensnoop | new | 1× |",
                "| zsnoop | z | 2× |"
            ]
        );
        assert!(
            m.trim_end().ends_with("biotop/bcc, zsnoop/bpftrace."),
            "{m}"
        );
    }

    #[test]
    fn results_without_bpf_run_times_or_other_peers_show_dashes() {
        let s = |v: &[f64]| Spread::of(v).unwrap().to_json();
        let doc = json!({
            "cpus": 2,
            "tools": {
                "execsnoop": {
                    "rounds": 1, "kernel": "6.18", "date": "2026-01-02T00:00:00Z",
                    "workload": "exec loop", "best_peer": "bcc",
                    "conditions": [
                        { "label": "ours", "role": "ours", "slowdown": s(&[1.2]) },
                        { "label": "bcc", "role": "peer", "slowdown": s(&[1.5]) }
                    ]
                },
                "runqlat": {
                    "rounds": 1, "kernel": "6.18", "date": "2026-01-02T00:00:00Z",
                    "workload": "sched pipe", "best_peer": null,
                    "conditions": [
                        { "label": "ours", "role": "ours", "slowdown": s(&[1.1]), "bpf_ns_a_run": "80" }
                    ]
                }
            }
        });
        let table = markdown_table(&doc).unwrap();
        assert!(
            table.contains("| 1.50× bcc | - / - | - / - | - / - | - / - | – / – | – |"),
            "{table}"
        );
        assert!(
            table.contains("| no peer runs here | - | - | - | - | 80 | – |"),
            "{table}"
        );
    }
}
