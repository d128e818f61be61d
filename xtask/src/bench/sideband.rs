//! What following every process's mappings costs (the stack tools' side
//! band: mmap2, exec, fork and exit records on every CPU, and each mapped
//! file opened while its process lives): an exec-heavy job (a shell
//! running a short program 2,000 times, each exec mapping five files)
//! untraced, under the tool, under the tool without its side band
//! (BPFTOOLS_DISABLE=sideband), and under `perf record -a -g`, which keeps
//! the same records; interleaved per round, each tool's whole process
//! tree's CPU (wait4).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Result};
use serde_json::{json, Value};

use super::foreign::Watch;
use super::profile::{run_around, Run, Sampler};
use super::stats::Spread;

/// Execs of the job.
const EXECS: u32 = 2000;

#[derive(Debug, Default)]
pub struct Phases {
    tool: String,
    untraced: Vec<f64>,
    runs: Vec<Run>,
}

/// The job: a shell that runs /bin/true EXECS times; its time in ms.
fn job() -> Result<f64> {
    let start = Instant::now();
    let status = Command::new("sh")
        .args([
            "-c",
            "i=0; while [ $i -lt \"$0\" ]; do /bin/true; i=$((i+1)); done",
            &EXECS.to_string(),
        ])
        .status()?;
    if !status.success() {
        bail!("the exec job failed: {status}");
    }
    Ok(start.elapsed().as_secs_f64() * 1e3)
}

fn conditions(bin: &Path, args: &[&str], ready: &'static str, scratch: &Path) -> Vec<Sampler> {
    let ours = |label: &str, env: Vec<(String, String)>| Sampler {
        label: label.into(),
        hz: 99,
        program: bin.display().to_string(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env,
        ready: Some(ready),
        file: None,
    };
    let data = scratch.join("sideband-perf.data");
    vec![
        ours("ours", Vec::new()),
        ours(
            "ours, no side band",
            vec![("BPFTOOLS_DISABLE".into(), "sideband".into())],
        ),
        Sampler {
            label: "perf record".into(),
            hz: 99,
            program: "sh".into(),
            args: vec![
                "-c".into(),
                format!(
                    "trap true INT; rm -f {d}; perf record -q -F 99 -a -g -o {d} & p=$!; \
                     wait $p; wait $p",
                    d = data.display()
                ),
            ],
            env: Vec::new(),
            ready: None,
            file: Some(data),
        },
    ]
}

/// `bin args` (ready when it prints `ready`) around the exec job.
pub fn phases(
    bin: &Path,
    args: &[&str],
    ready: &'static str,
    scratch: &Path,
    rounds: usize,
    watch: &mut Watch,
) -> Result<Phases> {
    let tool = bin
        .file_name()
        .map_or("tool".into(), |n| n.to_string_lossy().into_owned());
    println!("   side band phases: {EXECS} execs of /bin/true by a shell");
    let mut all = Phases {
        tool,
        ..Phases::default()
    };
    let mut order: Vec<Option<Sampler>> = vec![None];
    order.extend(conditions(bin, args, ready, scratch).into_iter().map(Some));
    job()?;
    for round in 0..rounds {
        let mut this = order.clone();
        this.rotate_left(round % order.len());
        for c in this {
            let before = watch.before_condition()?;
            let r = match &c {
                None => job().map(|ms| {
                    all.untraced.push(ms);
                    format!("job {ms:.0} ms")
                }),
                Some(s) => run_around(s, job).map(|r| {
                    let line = format!("job {:.0} ms, CPU {:.0} ms", r.job_ms, r.cpu_ms);
                    all.runs.push(r);
                    line
                }),
            };
            watch.after_condition(&before, "the side band phase")?;
            let label = c.as_ref().map_or("untraced", |s| s.label.as_str());
            match r {
                Ok(line) => println!("   [{}/{rounds}] {label:<20} {line}", round + 1),
                Err(e) if label == "perf record" => {
                    println!("   [{}/{rounds}] {label:<20} failed: {e:#}", round + 1)
                }
                Err(e) => return Err(e.context(label.to_string())),
            }
        }
    }
    Ok(all)
}

/// The figures for results.json.
pub fn extras(phases: &Result<Phases>) -> Value {
    let p = match phases {
        Ok(p) => p,
        Err(e) => return json!({ "side_band": { "error": format!("{e:#}") } }),
    };
    let spread = |v: Vec<f64>| Spread::of(&v).map(|s| s.to_json());
    let untraced = Spread::of(&p.untraced).map_or(f64::NAN, |s| s.median);
    let mut by = serde_json::Map::new();
    for label in ["ours", "ours, no side band", "perf record"] {
        let runs: Vec<&Run> = p.runs.iter().filter(|r| r.label == label).collect();
        if runs.is_empty() {
            continue;
        }
        let f = |g: &dyn Fn(&Run) -> f64| spread(runs.iter().map(|r| g(r)).collect());
        let name = if label.starts_with("ours") {
            label.replacen("ours", &p.tool, 1)
        } else {
            label.to_string()
        };
        by.insert(
            name,
            json!({
                "slowdown": f(&|r| r.job_ms / untraced),
                "cpu_ms": f(&|r| r.cpu_ms),
                "rss_kib": f(&|r| r.rss_kib as f64),
            }),
        );
    }
    json!({ "side_band": {
        "what": format!("a shell running /bin/true {EXECS} times, untraced and under each \
                 condition at 99 Hz, interleaved; CPU and peak RSS of the whole process tree"),
        "untraced_ms": spread(p.untraced.clone()),
        "by_condition": by,
    }})
}

/// The extras as text lines for the console.
pub fn describe_extras(extras: &Value) -> Vec<String> {
    let s = &extras["side_band"];
    if let Some(e) = s["error"].as_str() {
        return vec![format!("side band phases failed: {e}")];
    }
    let show = |v: &Value, decimals: usize| {
        Spread::from_json(v).map_or("-".to_string(), |v| v.show(decimals))
    };
    let mut lines = vec![format!(
        "following mappings, {EXECS} execs (untraced {} ms; median [min–max] over rounds):",
        show(&s["untraced_ms"], 0)
    )];
    if let Some(by) = s["by_condition"].as_object() {
        for (name, v) in by {
            lines.push(format!(
                "  {name:<28} slowdown {}, CPU {} ms, peak RSS {} KiB",
                show(&v["slowdown"], 3),
                show(&v["cpu_ms"], 0),
                show(&v["rss_kib"], 0)
            ));
        }
    }
    lines
}
