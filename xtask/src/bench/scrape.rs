//! The cost of being scraped: runqlat --prometheus while a scheduler-heavy
//! workload keeps both CPUs busy for about 30 s, with and without 50
//! scrapes a second, interleaved per round. What the scrapes cost the
//! traced workload, what they cost the tool in CPU, how long a scrape
//! takes, and whether the tool's memory grows with them.
//!
//! The workload is `perf bench sched messaging` (hackbench: 160 tasks
//! passing messages), not sched pipe: a ping-pong between two tasks runs
//! faster when anything else keeps the CPUs out of idle (here, in a VM,
//! leaving idle is dear), so scrapes would seem to speed it up.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::foreign::Watch;
use super::measure::{Ready, Tracer};
use super::proc;
use super::stats::Spread;

const PER_SECOND: u32 = 50;
const PHASE: Duration = Duration::from_secs(30);
const BANNER: &str = "Tracing run queue latency";

/// One phase: runqlat serving metrics through one workload run.
#[derive(Debug)]
pub struct Phase {
    scraped: bool,
    workload_ms: f64,
    tool_cpu_ms: f64,
    scrapes: u64,
    failed: u64,
    scrape_ms: Vec<f64>,
    /// VmRSS once a second, KiB.
    rss_kib: Vec<u64>,
}

/// `perf bench sched messaging` for `loops` loops; its wall time in ms.
fn messaging(loops: u32) -> Result<f64> {
    let start = Instant::now();
    let out = Command::new("perf")
        .args([
            "bench",
            "sched",
            "messaging",
            "-g",
            "4",
            "-l",
            &loops.to_string(),
        ])
        .output()
        .context("running perf bench sched messaging")?;
    if !out.status.success() {
        bail!(
            "perf bench sched messaging: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(start.elapsed().as_secs_f64() * 1e3)
}

/// One GET /metrics; the time it took, or None when it failed.
fn scrape(port: u16) -> Option<Duration> {
    let start = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(s, "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    (text.starts_with("HTTP/1.") && text.contains(" 200 ") && text.contains("_bucket{"))
        .then(|| start.elapsed())
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

fn phase(runqlat: &Path, loops: u32, scraped: bool) -> Result<Phase> {
    let port = free_port()?;
    let mut cmd = Command::new(runqlat);
    cmd.args(["--prometheus", &format!("127.0.0.1:{port}")]);
    let mut tracer = Tracer::spawn(cmd, Some(BANNER.into()), None)?;
    tracer.wait_ready(&Ready::Line(BANNER.into()), None)?;
    let pid = tracer.proc.id();
    if scrape(port).is_none() {
        bail!(
            "runqlat --prometheus did not answer: {}",
            tracer.last_words()
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        thread::spawn(move || {
            let (mut ok, mut failed, mut rss) = (Vec::new(), 0u64, Vec::new());
            let period = Duration::from_secs(1) / PER_SECOND;
            let start = Instant::now();
            let mut next = start;
            let mut tick = 0u32;
            while !stop.load(Ordering::Relaxed) {
                if tick.is_multiple_of(PER_SECOND) {
                    rss.extend(proc::rss_kib(pid));
                }
                tick += 1;
                if scraped {
                    match scrape(port) {
                        Some(d) => ok.push(d.as_secs_f64() * 1e3),
                        None => failed += 1,
                    }
                }
                // On a fixed schedule: a slow scrape does not slow the rate.
                next += period;
                if let Some(wait) = next.checked_duration_since(Instant::now()) {
                    thread::sleep(wait);
                }
            }
            (ok, failed, rss)
        })
    };
    let cpu_before = proc::cpu_ns(pid);
    let workload = messaging(loops);
    let cpu_after = proc::cpu_ns(pid);
    stop.store(true, Ordering::Relaxed);
    let (scrape_ms, failed, rss_kib) = sampler.join().expect("the scraper thread");
    tracer.proc.interrupt(Duration::from_secs(10))?;
    tracer.finish();
    Ok(Phase {
        scraped,
        workload_ms: workload?,
        tool_cpu_ms: cpu_before
            .zip(cpu_after)
            .map_or(0.0, |(a, b)| b.saturating_sub(a) as f64 / 1e6),
        scrapes: scrape_ms.len() as u64,
        failed,
        scrape_ms,
        rss_kib,
    })
}

/// The phases, unscraped and scraped in an order rotated each round,
/// each checked like any condition.
pub fn phases(ours: &Path, rounds: usize, watch: &mut Watch) -> Result<Vec<Phase>> {
    // Loops for about PHASE untraced; the same for every phase.
    let probe_loops = 1000;
    let probe_ms = messaging(probe_loops)?;
    let loops = ((PHASE.as_secs_f64() * 1e3 / probe_ms) * probe_loops as f64) as u32;
    println!("   scrape phases: perf bench sched messaging -g 4 -l {loops} (~30 s untraced)");
    let mut all = Vec::new();
    for round in 0..rounds {
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for scraped in order {
            let before = watch.before_condition()?;
            let p = phase(&ours.join("runqlat"), loops, scraped);
            watch.after_condition(&before, "runqlat's scrape phase")?;
            let p = p.context("runqlat's scrape phase")?;
            println!(
                "   [{}/{rounds}] {:<26} {:.0} ms, tool CPU {:.0} ms, {} scrapes ({} failed), \
                 RSS {} -> {} KiB",
                round + 1,
                if scraped {
                    "scraped 50/s"
                } else {
                    "not scraped"
                },
                p.workload_ms,
                p.tool_cpu_ms,
                p.scrapes,
                p.failed,
                p.rss_kib.first().unwrap_or(&0),
                p.rss_kib.last().unwrap_or(&0),
            );
            all.push(p);
        }
    }
    Ok(all)
}

/// The figures for results.json.
pub fn extras(phases: &Result<Vec<Phase>>) -> Value {
    let phases = match phases {
        Ok(p) => p,
        Err(e) => return json!({ "scrapes": { "error": format!("{e:#}") } }),
    };
    let of = |scraped: bool| phases.iter().filter(move |p| p.scraped == scraped);
    let spread = |v: Vec<f64>| Spread::of(&v).map(|s| s.to_json());
    // Per round: the scraped phase over the unscraped one.
    let ratios: Vec<f64> = of(true)
        .zip(of(false))
        .map(|(s, u)| s.workload_ms / u.workload_ms)
        .collect();
    let rss_growth: Vec<f64> = of(true)
        .filter_map(|p| Some(*p.rss_kib.last()? as f64 - *p.rss_kib.first()? as f64))
        .collect();
    let all_scrape_ms: Vec<f64> = of(true).flat_map(|p| p.scrape_ms.clone()).collect();
    let p99 = {
        let mut v = all_scrape_ms.clone();
        v.sort_by(f64::total_cmp);
        v.get(v.len().saturating_sub(1) * 99 / 100).copied()
    };
    json!({ "scrapes": {
        "what": "runqlat --prometheus during perf bench sched messaging (~30 s, both CPUs \
                 busy), scraped 50 times a second or not, interleaved",
        "workload_ms_not_scraped": spread(of(false).map(|p| p.workload_ms).collect()),
        "workload_ms_scraped": spread(of(true).map(|p| p.workload_ms).collect()),
        "scraped_over_not_scraped": spread(ratios),
        "tool_cpu_ms_not_scraped": spread(of(false).map(|p| p.tool_cpu_ms).collect()),
        "tool_cpu_ms_scraped": spread(of(true).map(|p| p.tool_cpu_ms).collect()),
        "scrapes_per_phase": spread(of(true).map(|p| p.scrapes as f64).collect()),
        "failed_scrapes": of(true).map(|p| p.failed).sum::<u64>(),
        "scrape_ms": spread(all_scrape_ms),
        "scrape_ms_p99": p99,
        "rss_kib_first_scraped": spread(of(true).filter_map(|p| Some(*p.rss_kib.first()? as f64)).collect()),
        "rss_kib_growth_scraped": spread(rss_growth),
    }})
}

/// The extras as text lines for the console.
pub fn describe_extras(extras: &Value) -> Vec<String> {
    let s = &extras["scrapes"];
    if let Some(e) = s["error"].as_str() {
        return vec![format!("scrape phases failed: {e}")];
    }
    let show = |key: &str, decimals: usize| {
        Spread::from_json(&s[key]).map_or("-".to_string(), |v| v.show(decimals))
    };
    vec![
        "under 50 scrapes/s (median [min–max] over rounds):".to_string(),
        format!(
            "  workload {} ms scraped, {} ms not; scraped / not: {}",
            show("workload_ms_scraped", 0),
            show("workload_ms_not_scraped", 0),
            show("scraped_over_not_scraped", 3)
        ),
        format!(
            "  tool CPU {} ms scraped, {} ms not; {} scrapes per phase ({} failed), \
             {} ms each (p99 {:.2})",
            show("tool_cpu_ms_scraped", 0),
            show("tool_cpu_ms_not_scraped", 0),
            show("scrapes_per_phase", 0),
            s["failed_scrapes"],
            show("scrape_ms", 2),
            s["scrape_ms_p99"].as_f64().unwrap_or(f64::NAN)
        ),
        format!(
            "  RSS {} KiB at the first second, grew by {} KiB over the phase",
            show("rss_kib_first_scraped", 0),
            show("rss_kib_growth_scraped", 0)
        ),
    ]
}
