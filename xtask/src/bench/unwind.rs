//! What `offcputime --unwind dwarf` costs next to `--unwind fp`, with -p on
//! the traced process, interleaved per round:
//! - a ping-pong between two threads (`perf bench sched pipe -T`, both on
//!   CPU 0), every message two off-CPU events: the slowdown of the loop,
//!   the tool's CPU per event, and copies lost (the ring full);
//! - 16384 distinct stacks (many-stacks.c, built with frame pointers so
//!   that both modes see them all): the time from Ctrl-C to the end of the
//!   report.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::foreign::Watch;
use super::measure::{Ready, Tracer};
use super::proc::{self, Guarded};
use super::stats::Spread;

const BANNER: &str = "Tracing off-CPU time";
/// The modes measured; None is the untraced loop.
const MODES: [Option<&str>; 3] = [None, Some("fp"), Some("dwarf")];

/// One ping-pong run.
#[derive(Debug)]
pub struct Pipe {
    mode: Option<&'static str>,
    loop_ms: f64,
    tool_cpu_ms: f64,
    /// Ring buffer records the tool said were lost.
    lost: u64,
}

/// One report of many stacks.
#[derive(Debug)]
pub struct Report {
    mode: &'static str,
    stacks: usize,
    report_ms: f64,
}

#[derive(Debug, Default)]
pub struct Phases {
    loops: u32,
    pipes: Vec<Pipe>,
    reports: Vec<Report>,
}

/// A process held before it starts, so that the tool can be pointed at its
/// pid first: `sh` that waits for a line, then execs the program (same
/// pid).
fn held(program: &str, args: &[String]) -> Result<Guarded> {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "read go && exec \"$@\" >/dev/null", "sh", program])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null());
    Guarded::spawn(&mut cmd)
}

fn go(p: &mut Guarded) -> Result<()> {
    let stdin = p
        .child()
        .stdin
        .as_mut()
        .context("the held process's stdin")?;
    stdin.write_all(b"go\n")?;
    Ok(())
}

/// offcputime on `pid`; `count`: the marker of the lines to count.
fn offcputime(ours: &Path, mode: &str, pid: u32, count: Option<&str>) -> Result<Tracer> {
    let mut cmd = Command::new(ours.join("offcputime"));
    cmd.args(["--unwind", mode, "-f", "-p", &pid.to_string()]);
    let mut tracer = Tracer::spawn(cmd, Some(BANNER.into()), count.map(String::from))?;
    tracer.wait_ready(&Ready::Line(BANNER.into()), None)?;
    Ok(tracer)
}

/// The lost-record count in the tool's notes ("N more events lost ...; M
/// so far"): the last M.
fn lost_in(notes: &[String]) -> u64 {
    notes
        .iter()
        .filter_map(|n| {
            n.rsplit_once("; ")?
                .1
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .max()
        .unwrap_or(0)
}

fn pipe(ours: &Path, mode: Option<&'static str>, loops: u32) -> Result<Pipe> {
    // Both threads on CPU 0: each message is then a direct switch between
    // them, and the tool has CPU 1. Spread over two CPUs, the ping-pong
    // runs faster when anything keeps CPUs out of idle (leaving idle is
    // dear in this VM), and tracing it would seem to speed it up.
    let args = ["-c", "0", "perf", "bench", "sched", "pipe", "-T", "-l"].map(String::from);
    let mut args = args.to_vec();
    args.push(loops.to_string());
    let mut target = held("taskset", &args)?;
    let mut tracer = mode
        .map(|m| offcputime(ours, m, target.id(), None))
        .transpose()?;
    let cpu_before = tracer.as_ref().and_then(|t| proc::cpu_ns(t.proc.id()));
    let start = Instant::now();
    go(&mut target)?;
    if !target.wait_for(Duration::from_secs(300))? {
        bail!("perf bench sched pipe did not end within 300 s");
    }
    let loop_ms = start.elapsed().as_secs_f64() * 1e3;
    let (mut tool_cpu_ms, mut lost) = (0.0, 0);
    if let Some(mut t) = tracer.take() {
        let cpu_after = proc::cpu_ns(t.proc.id());
        tool_cpu_ms = cpu_before
            .zip(cpu_after)
            .map_or(0.0, |(a, b)| b.saturating_sub(a) as f64 / 1e6);
        // A second for the tool's last look at the lost count.
        std::thread::sleep(Duration::from_millis(1100));
        if t.proc.interrupt(Duration::from_secs(60))?.is_none() {
            bail!("offcputime did not end within 60 s of Ctrl-C");
        }
        lost = lost_in(&t.finish().notes);
    }
    Ok(Pipe {
        mode,
        loop_ms,
        tool_cpu_ms,
        lost,
    })
}

fn report(ours: &Path, mode: &'static str, program: &Path) -> Result<Report> {
    let mut target = held(&program.display().to_string(), &[])?;
    // Folded lines: one per stack (the process has one thread).
    let mut tracer = offcputime(ours, mode, target.id(), Some("many-stacks;"))?;
    go(&mut target)?;
    // Two passes over every path (each ~60 µs a sleep, most of it the timer
    // slack), so that each stack is seen.
    std::thread::sleep(Duration::from_secs(4));
    // Stopped first: the report then symbolizes a live process, as a
    // Ctrl-C on a running service does, but no new stack comes in.
    let report_ms = tracer
        .proc
        .interrupt(Duration::from_secs(120))?
        .context("offcputime did not end within 120 s of Ctrl-C")?
        .as_secs_f64()
        * 1e3;
    drop(target);
    Ok(Report {
        mode,
        stacks: tracer.finish().events as usize,
        report_ms,
    })
}

fn build_many_stacks(dir: &Path) -> Result<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bench/many-stacks.c");
    testbed::compile_c(
        &src,
        &dir.join("many-stacks"),
        &["-O1", "-fno-omit-frame-pointer"],
    )
}

/// The phases, in an order rotated each round, each checked like any
/// condition.
pub fn phases(ours: &Path, scratch: &Path, rounds: usize, watch: &mut Watch) -> Result<Phases> {
    // About 10 s untraced.
    let probe = pipe(ours, None, 100_000)?;
    let loops = ((10_000.0 / probe.loop_ms) * 100_000.0) as u32;
    println!(
        "   unwind phases: taskset -c 0 perf bench sched pipe -T -l {loops} (~10 s untraced), \
         -p on it"
    );
    let program = build_many_stacks(scratch)?;
    let mut all = Phases {
        loops,
        ..Phases::default()
    };
    for round in 0..rounds {
        let mut order = MODES.to_vec();
        order.rotate_left(round % MODES.len());
        for mode in order {
            let before = watch.before_condition()?;
            let p = pipe(ours, mode, loops);
            watch.after_condition(&before, "offcputime's unwind phase")?;
            let p = p.context("offcputime's unwind phase")?;
            println!(
                "   [{}/{rounds}] {:<26} {:.0} ms, tool CPU {:.0} ms, {} lost",
                round + 1,
                mode.map_or("untraced".into(), |m| format!("sched pipe, --unwind {m}")),
                p.loop_ms,
                p.tool_cpu_ms,
                p.lost
            );
            all.pipes.push(p);
        }
        for mode in ["fp", "dwarf"] {
            let before = watch.before_condition()?;
            let r = report(ours, mode, &program);
            watch.after_condition(&before, "offcputime's report phase")?;
            let r = r.context("offcputime's report phase")?;
            println!(
                "   [{}/{rounds}] {:<26} {} stacks reported in {:.0} ms",
                round + 1,
                format!("many stacks, --unwind {mode}"),
                r.stacks,
                r.report_ms
            );
            all.reports.push(r);
        }
    }
    Ok(all)
}

/// The figures for results.json.
pub fn extras(phases: &Result<Phases>) -> Value {
    let p = match phases {
        Ok(p) => p,
        Err(e) => return json!({ "unwind": { "error": format!("{e:#}") } }),
    };
    let spread = |v: Vec<f64>| Spread::of(&v).map(|s| s.to_json());
    let of = |mode: Option<&'static str>| p.pipes.iter().filter(move |x| x.mode == mode);
    // Per round: a mode's loop over the untraced one.
    let slowdown = |mode: &'static str| -> Vec<f64> {
        of(Some(mode))
            .zip(of(None))
            .map(|(t, u)| t.loop_ms / u.loop_ms)
            .collect()
    };
    // Two off-CPU events per round trip.
    let events = 2.0 * p.loops as f64;
    let cpu_us_per_event = |mode: &'static str| -> Vec<f64> {
        of(Some(mode))
            .map(|x| x.tool_cpu_ms * 1e3 / events)
            .collect()
    };
    let events_per_s = |mode: &'static str| -> Vec<f64> {
        of(Some(mode)).map(|x| events / (x.loop_ms / 1e3)).collect()
    };
    let lost = |mode: &'static str| -> Vec<f64> { of(Some(mode)).map(|x| x.lost as f64).collect() };
    // Per round: the time each event added to the loop, in µs.
    let added_us = |mode: &'static str| -> Vec<f64> {
        of(Some(mode))
            .zip(of(None))
            .map(|(t, u)| (t.loop_ms - u.loop_ms) * 1e3 / events)
            .collect()
    };
    let dwarf_over_fp: Vec<f64> = of(Some("dwarf"))
        .zip(of(Some("fp")))
        .map(|(d, f)| d.loop_ms / f.loop_ms)
        .collect();
    let reports = |mode: &'static str| p.reports.iter().filter(move |r| r.mode == mode);
    json!({ "unwind": {
        "what": "offcputime -f -p on taskset -c 0 perf bench sched pipe -T (2 off-CPU events \
                 a round trip), \
                 untraced, --unwind fp and --unwind dwarf, interleaved; and the report of \
                 16384 distinct stacks after Ctrl-C",
        "loops": p.loops,
        "slowdown_fp": spread(slowdown("fp")),
        "slowdown_dwarf": spread(slowdown("dwarf")),
        "dwarf_over_fp": spread(dwarf_over_fp),
        "added_us_per_event_fp": spread(added_us("fp")),
        "added_us_per_event_dwarf": spread(added_us("dwarf")),
        "tool_cpu_us_per_event_fp": spread(cpu_us_per_event("fp")),
        "tool_cpu_us_per_event_dwarf": spread(cpu_us_per_event("dwarf")),
        "events_per_s_dwarf": spread(events_per_s("dwarf")),
        "lost_dwarf": spread(lost("dwarf")),
        "report_stacks_fp": spread(reports("fp").map(|r| r.stacks as f64).collect()),
        "report_stacks_dwarf": spread(reports("dwarf").map(|r| r.stacks as f64).collect()),
        "report_ms_fp": spread(reports("fp").map(|r| r.report_ms).collect()),
        "report_ms_dwarf": spread(reports("dwarf").map(|r| r.report_ms).collect()),
    }})
}

/// The extras as text lines for the console.
pub fn describe_extras(extras: &Value) -> Vec<String> {
    let s = &extras["unwind"];
    if let Some(e) = s["error"].as_str() {
        return vec![format!("unwind phases failed: {e}")];
    }
    let show = |key: &str, decimals: usize| {
        Spread::from_json(&s[key]).map_or("-".to_string(), |v| v.show(decimals))
    };
    vec![
        "--unwind, -p on a sched pipe loop (median [min–max] over rounds):".to_string(),
        format!(
            "  slowdown fp {}, dwarf {} (dwarf / fp {}); per event: loop {} µs longer with fp, \
             {} µs with dwarf",
            show("slowdown_fp", 2),
            show("slowdown_dwarf", 2),
            show("dwarf_over_fp", 2),
            show("added_us_per_event_fp", 2),
            show("added_us_per_event_dwarf", 2)
        ),
        format!(
            "  tool CPU per event fp {} µs, dwarf {} µs",
            show("tool_cpu_us_per_event_fp", 2),
            show("tool_cpu_us_per_event_dwarf", 2)
        ),
        format!(
            "  dwarf at {} events/s: {} copies lost",
            show("events_per_s_dwarf", 0),
            show("lost_dwarf", 0)
        ),
        format!(
            "  report of many stacks: fp {} stacks in {} ms, dwarf {} stacks in {} ms",
            show("report_stacks_fp", 0),
            show("report_ms_fp", 0),
            show("report_stacks_dwarf", 0),
            show("report_ms_dwarf", 0)
        ),
    ]
}
