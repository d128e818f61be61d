//! What attaching many probes costs: a program of 1,000 functions
//! (`fn_0000` … `fn_0999`), each tracer pointed at all of them by one
//! pattern, interleaved per round: the time from spawn to attached (its
//! banner), and from Ctrl-C to its exit (detached). Ours with uprobe_multi
//! (one link per file) and without (a uprobe each), BCC's funccount and
//! bpftrace.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::foreign::Watch;
use super::measure::{Ready, Tracer};
use super::stats::Spread;

const FUNCTIONS: usize = 1000;

/// One tracer's start and end.
#[derive(Debug)]
pub struct Sample {
    who: &'static str,
    attach_ms: f64,
    detach_ms: f64,
}

#[derive(Debug, Default)]
pub struct Phases {
    samples: Vec<Sample>,
    /// Tracers that could not run here, and why.
    unavailable: Vec<(&'static str, String)>,
}

/// The program of many functions, each kept (noinline, called from main).
fn build(dir: &Path) -> Result<PathBuf> {
    let mut src = String::from("#define N __attribute__((noinline))\nvolatile int sink;\n");
    for i in 0..FUNCTIONS {
        writeln!(src, "N void fn_{i:04}(void) {{ sink += {i}; }}").unwrap();
    }
    src.push_str("int main(void) {\n");
    for i in 0..FUNCTIONS {
        writeln!(src, "  fn_{i:04}();").unwrap();
    }
    src.push_str("  return 0;\n}\n");
    let c = dir.join("many-functions.c");
    std::fs::write(&c, src).context("writing many-functions.c")?;
    testbed::compile_c(&c, &dir.join("many-functions"), &["-O1"])
}

/// A tracer: who, its command, and the line that says it is attached.
struct Candidate {
    who: &'static str,
    cmd: Command,
    ready: String,
}

fn candidates(
    ours: &Path,
    program: &Path,
    headers: &Result<PathBuf, String>,
) -> Vec<Result<Candidate, (&'static str, String)>> {
    let pattern = format!("{}:fn_*", program.display());
    let banner = format!("Tracing {FUNCTIONS} functions");
    let mut multi = Command::new(ours.join("funccount"));
    multi.arg(&pattern);
    let mut single = Command::new(ours.join("funccount"));
    single.arg(&pattern).env("BPFTOOLS_DISABLE", "uprobe_multi");
    let bcc = Path::new("/usr/sbin/funccount-bpfcc");
    let bcc = match (bcc.exists(), headers) {
        (false, _) => Err((
            "bcc",
            "funccount-bpfcc is missing (package bpfcc-tools)".into(),
        )),
        (_, Err(why)) => Err(("bcc", format!("no kernel headers for BCC: {why}"))),
        (true, Ok(dir)) => {
            let mut c = Command::new(bcc);
            c.arg(&pattern)
                .env("PYTHONUNBUFFERED", "1")
                .env("BCC_KERNEL_SOURCE", dir);
            Ok(Candidate {
                who: "bcc",
                cmd: c,
                ready: banner.clone(),
            })
        }
    };
    // bpftrace prints "Attaching N probes..." before it attaches them, and
    // runs BEGIN once they are: its line marks the end.
    // bpftrace refuses more than 512 programs unless told.
    let mut bt = Command::new("bpftrace");
    bt.env("BPFTRACE_MAX_BPF_PROGS", (FUNCTIONS + 10).to_string());
    bt.args([
        "-e",
        &format!(
            "BEGIN {{ printf(\"attached\\n\"); }} uprobe:{}:fn_* {{ @[probe] = count(); }}",
            program.display()
        ),
    ]);
    vec![
        Ok(Candidate {
            who: "ours (uprobe_multi)",
            cmd: multi,
            ready: banner.clone(),
        }),
        Ok(Candidate {
            who: "ours (a uprobe each)",
            cmd: single,
            ready: banner,
        }),
        bcc,
        Ok(Candidate {
            who: "bpftrace",
            cmd: bt,
            ready: "attached".into(),
        }),
    ]
}

fn one(c: Candidate) -> Result<Sample> {
    let mut tracer = Tracer::spawn(c.cmd, Some(c.ready.clone()), None)?;
    let attach = tracer.wait_ready(&Ready::Line(c.ready), None)?;
    let detach = tracer
        .proc
        .interrupt(Duration::from_secs(300))?
        .with_context(|| format!("{} did not end within 300 s of Ctrl-C", c.who))?;
    tracer.finish();
    Ok(Sample {
        who: c.who,
        attach_ms: attach.as_secs_f64() * 1e3,
        detach_ms: detach.as_secs_f64() * 1e3,
    })
}

/// The rounds, each tracer once a round, in an order rotated each round.
pub fn phases(
    ours: &Path,
    scratch: &Path,
    headers: &Result<PathBuf, String>,
    rounds: usize,
    watch: &mut Watch,
) -> Result<Phases> {
    let program = build(scratch)?;
    println!(
        "   attach phases: {FUNCTIONS} functions by one pattern ({}:fn_*)",
        program.display()
    );
    let mut all = Phases::default();
    for round in 0..rounds {
        let mut list = candidates(ours, &program, headers);
        let n = list.len();
        list.rotate_left(round % n);
        for c in list {
            let c = match c {
                Ok(c) => c,
                Err(why) => {
                    if round == 0 {
                        all.unavailable.push(why);
                    }
                    continue;
                }
            };
            let who = c.who;
            let before = watch.before_condition()?;
            let s = one(c);
            watch.after_condition(&before, who)?;
            match s {
                Ok(s) => {
                    println!(
                        "   [{}/{rounds}] {:<22} attached in {:.0} ms, detached in {:.0} ms",
                        round + 1,
                        s.who,
                        s.attach_ms,
                        s.detach_ms
                    );
                    all.samples.push(s);
                }
                Err(e) if who.starts_with("ours") => return Err(e),
                Err(e) => {
                    if round == 0 {
                        all.unavailable.push((who, format!("{e:#}")));
                    }
                }
            }
        }
    }
    Ok(all)
}

const WHO: [&str; 4] = [
    "ours (uprobe_multi)",
    "ours (a uprobe each)",
    "bcc",
    "bpftrace",
];

pub fn extras(phases: &Result<Phases>) -> Value {
    let p = match phases {
        Ok(p) => p,
        Err(e) => return json!({ "attach": { "error": format!("{e:#}") } }),
    };
    let mut out = serde_json::Map::new();
    for who in WHO {
        let of = |f: fn(&Sample) -> f64| -> Option<Value> {
            let v: Vec<f64> = p.samples.iter().filter(|s| s.who == who).map(f).collect();
            Spread::of(&v).map(|s| s.to_json())
        };
        out.insert(
            who.into(),
            json!({
                "attach_ms": of(|s| s.attach_ms),
                "detach_ms": of(|s| s.detach_ms),
            }),
        );
    }
    let unavailable: Vec<Value> = p
        .unavailable
        .iter()
        .map(|(who, why)| json!({ "who": who, "why": why }))
        .collect();
    json!({ "attach": { "functions": FUNCTIONS, "by": out, "unavailable": unavailable } })
}

pub fn describe_extras(extras: &Value) -> Vec<String> {
    let a = &extras["attach"];
    if let Some(e) = a["error"].as_str() {
        return vec![format!("attach phases failed: {e}")];
    }
    let mut lines = vec![format!(
        "attaching {FUNCTIONS} functions by one pattern, and detaching (median [min–max] ms over rounds):"
    )];
    for who in WHO {
        let show = |key: &str| {
            Spread::from_json(&a["by"][who][key]).map_or("-".to_string(), |v| v.show(0))
        };
        if a["by"][who]["attach_ms"].is_null() {
            continue;
        }
        lines.push(format!(
            "  {who:<22} attach {}, detach {}",
            show("attach_ms"),
            show("detach_ms")
        ));
    }
    for u in a["unavailable"].as_array().into_iter().flatten() {
        lines.push(format!(
            "  {}: not run: {}",
            u["who"].as_str().unwrap_or("?"),
            u["why"].as_str().unwrap_or("?")
        ));
    }
    lines
}
