//! memleak's workloads, from the C programs in xtask/bench-c/: the cost per
//! malloc+free under each condition, what each allocator uprobe costs alone,
//! and the report phase for 10k unique stacks.

use std::io::{BufRead, BufReader, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};
use std::thread;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::foreign::Watch;
use super::measure::{Ready, Tracer};
use super::peers::Role;
use super::proc::Guarded;
use super::report::ToolResult;
use super::stats::Spread;
use super::workloads::{Target, Unit, Workload};

const MALLOC_LOOP_C: &str = include_str!("../../bench-c/malloc_loop.c");
const MANY_STACKS_C: &str = include_str!("../../bench-c/many_stacks.c");

/// Pairs per run: a few seconds traced, a few ms untraced (the program
/// times its own loop, so the short untraced run is still exact).
const PAIRS: u64 = 200_000;

pub fn compile(dir: &Path, name: &str, source: &str) -> Result<PathBuf> {
    let src = dir.join(format!("{name}.c"));
    let bin = dir.join(name);
    std::fs::write(&src, source)?;
    // Frame pointers and real calls: memleak's stacks must see every level.
    testbed::compile_c(
        &src,
        &bin,
        &[
            "-O1",
            "-g",
            "-fno-omit-frame-pointer",
            "-fno-optimize-sibling-calls",
        ],
    )
}

/// A C workload started and held at its "ready" line.
struct Helper {
    proc: Guarded,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Helper {
    fn start(bin: &Path, args: &[String]) -> Result<Helper> {
        let mut proc = Guarded::spawn(
            Command::new(bin)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped()),
        )?;
        let mut lines = BufReader::new(proc.child().stdout.take().unwrap()).lines();
        if lines.next().transpose()?.as_deref() != Some("ready") {
            bail!("{} did not start", bin.display());
        }
        Ok(Helper { proc, lines })
    }

    /// Lets it go; returns its next output line.
    fn go(&mut self) -> Result<String> {
        writeln!(self.proc.child().stdin.as_mut().unwrap(), "go")?;
        self.lines
            .next()
            .transpose()?
            .context("the workload ended without its result")
    }
}

struct MallocLoop(Helper);

impl Target for MallocLoop {
    fn pid(&self) -> Option<u32> {
        Some(self.0.proc.id())
    }

    fn run(&mut self) -> Result<f64> {
        let line = self.0.go()?;
        line.trim()
            .parse()
            .with_context(|| format!("the malloc loop's timing: {line:?}"))
    }
}

/// malloc(64)+free in a loop; the figure is ns per pair.
pub fn malloc_loop(dir: &Path) -> Result<Workload> {
    let bin = compile(dir, "bench-malloc-loop", MALLOC_LOOP_C)?;
    let args = vec![PAIRS.to_string()];
    Ok(Workload::new(
        format!("malloc(64)+free loop, {PAIRS} pairs"),
        Unit::NsPerPair,
        Box::new(move || Ok(Box::new(MallocLoop(Helper::start(&bin, &args)?)))),
    ))
}

/// One report of ours for the many-stacks leaker.
#[derive(Debug, Clone)]
pub struct ReportRun {
    pub stacks: u64,
    pub report_ms: f64,
    pub peak_rss_kib: f64,
    pub note: Option<String>,
}

/// memleak -v reports its report phase: `report: N stacks in X ms, peak RSS Y KiB`.
fn parse_report(line: &str) -> Option<ReportRun> {
    let rest = &line[line.find("report:")? + "report:".len()..];
    let numbers: Vec<f64> = rest
        .split(|c: char| !c.is_ascii_digit() && c != '.')
        .filter_map(|s| s.parse().ok())
        .collect();
    match numbers[..] {
        [stacks, report_ms, peak_rss_kib, ..] => Some(ReportRun {
            stacks: stacks as u64,
            report_ms,
            peak_rss_kib,
            note: None,
        }),
        _ => None,
    }
}

/// Ours against the leaker: leak from 10000 call paths, one report at the
/// end of a 3 s interval, as measured by memleak -v itself.
fn report_phase(ours: &Path, leaker: &Path) -> Result<ReportRun> {
    let mut helper = Helper::start(leaker, &[])?;
    let pid = helper.proc.id().to_string();
    let mut cmd = Command::new(ours);
    cmd.args(["-p", &pid, "-f", "-v", "-o", "0", "-T", "20000"])
        .args(["--stack-storage-size", "262144", "3", "1"]);
    let mut tracer = Tracer::spawn(cmd, Some("Attaching to pid".into()), None)?;
    tracer.wait_ready(&Ready::Line("Attaching to pid".into()), None)?;
    thread::sleep(Duration::from_millis(300));
    let done = helper.go()?;
    if done != "done" {
        bail!("the leaker said {done:?}");
    }
    // One report after the interval, then it ends by itself.
    let ended = tracer.proc.wait_for(Duration::from_secs(60))?;
    let out = tracer.finish();
    drop(helper);
    if !ended {
        bail!("memleak did not end within 60 s of its one report");
    }
    let stderr = &out.tails[1];
    let mut report = stderr
        .iter()
        .find_map(|l| parse_report(l))
        .with_context(|| format!("no report line from memleak -v: {:?}", stderr.back()))?;
    // Stacks the kernel could not store (stack map hash collisions) are
    // missing from the report: say how many.
    report.note = stderr
        .iter()
        .find(|l| l.contains("not recorded"))
        .map(|l| l.trim().to_string());
    Ok(report)
}

/// The report phase once per round, each checked like any condition.
pub fn report_phases(
    ours: &Path,
    dir: &Path,
    rounds: usize,
    watch: &mut Watch,
) -> Result<Vec<ReportRun>> {
    let leaker = compile(dir, "bench-many-stacks", MANY_STACKS_C)?;
    let mut reports = Vec::new();
    for round in 1..=rounds {
        let before = watch.before_condition()?;
        let r = report_phase(ours, &leaker);
        watch.after_condition(&before, "memleak's report phase")?;
        let r = r.context("memleak's report phase")?;
        println!(
            "   [{round}/{rounds}] report phase: {} stacks in {} ms, peak RSS {} KiB",
            r.stacks, r.report_ms, r.peak_rss_kib
        );
        reports.push(r);
    }
    Ok(reports)
}

/// The per-round difference of a condition's figure from the untraced one.
fn cost_over(result: &ToolResult, label: &str, base: &str) -> Option<Spread> {
    let of = |l: &str| result.conditions.iter().find(|c| c.label == l);
    let (c, b) = (of(label)?, of(base)?);
    let diffs: Vec<f64> = c
        .runs
        .iter()
        .zip(&b.runs)
        .map(|(c, b)| c.value - b.value)
        .collect();
    Spread::of(&diffs)
}

/// The memleak-only figures: each uprobe's cost alone, ours over the bare
/// traps, and the report phase.
pub fn extras(result: &ToolResult, reports: &Result<Vec<ReportRun>>) -> Value {
    let probe_costs: Vec<Value> = result
        .conditions
        .iter()
        .filter(|c| c.role == Role::Reference)
        .filter_map(|c| {
            let cost = cost_over(result, &c.label, "untraced")?;
            Some(json!({
                "condition": c.label,
                "probes": c.how,
                "ns_per_pair_over_untraced": cost.to_json(),
            }))
        })
        .collect();
    let report_phase = match reports {
        Ok(reports) => {
            let spread = |f: fn(&ReportRun) -> f64| {
                Spread::of(&reports.iter().map(f).collect::<Vec<_>>()).map(|s| s.to_json())
            };
            let mut notes: Vec<&str> = reports.iter().filter_map(|r| r.note.as_deref()).collect();
            notes.dedup();
            json!({
                "what": "memleak -p PID -f -v: one report of the leaks from 10000 call paths",
                "stacks": spread(|r| r.stacks as f64),
                "report_ms": spread(|r| r.report_ms),
                "peak_rss_kib": spread(|r| r.peak_rss_kib),
                "notes": notes,
            })
        }
        Err(e) => json!({ "error": format!("{e:#}") }),
    };
    json!({
        "probe_costs": probe_costs,
        "report_phase": report_phase,
    })
}

/// The extras as text lines for the console.
pub fn describe_extras(extras: &Value) -> Vec<String> {
    let mut lines = vec!["cost per malloc+free over untraced, ns (median [min–max]):".to_string()];
    for p in extras["probe_costs"].as_array().into_iter().flatten() {
        if let Some(s) = Spread::from_json(&p["ns_per_pair_over_untraced"]) {
            lines.push(format!(
                "  {:<28} {:>22}   ({})",
                p["condition"].as_str().unwrap_or(""),
                s.show(0),
                p["probes"].as_str().unwrap_or("")
            ));
        }
    }
    let r = &extras["report_phase"];
    if let (Some(stacks), Some(ms), Some(rss)) = (
        Spread::from_json(&r["stacks"]),
        Spread::from_json(&r["report_ms"]),
        Spread::from_json(&r["peak_rss_kib"]),
    ) {
        lines.push(format!(
            "report phase, leaks from 10000 call paths: {} stacks in {} ms, peak RSS {} KiB",
            stacks.show(0),
            ms.show(0),
            rss.show(0)
        ));
    }
    for note in r["notes"].as_array().into_iter().flatten() {
        lines.push(format!("  {}", note.as_str().unwrap_or("")));
    }
    if let Some(e) = r["error"].as_str() {
        lines.push(format!("report phase failed: {e}"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_memleak_report_line() {
        let r =
            parse_report("memleak: report: 10000 stacks in 205 ms, peak RSS 23456 KiB").unwrap();
        assert_eq!(
            (r.stacks, r.report_ms, r.peak_rss_kib),
            (10000, 205.0, 23456.0)
        );
        assert!(parse_report("memleak: report: nothing").is_none());
    }
}
