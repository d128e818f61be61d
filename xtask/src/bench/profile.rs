//! What sampling costs, whole: profile against bpftrace, BCC and perf's
//! pipeline (perf record, then perf script and inferno-collapse-perf, as
//! users make flame graphs) at 99 and 999 Hz on cpu-job.c (a fixed amount
//! of work in two processes), interleaved per round. Each tool runs in its
//! own process group and is reaped with wait4(2): its CPU is every process
//! of it, post-processing included, and its peak RSS the largest of them.
//! Then the report of many distinct stacks (cpu-job.c `spread`, sampled at
//! 4999 Hz): the time from Ctrl-C to the end of profile's report.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::foreign::Watch;
use super::stats::Spread;

/// A condition: who samples, at what rate.
#[derive(Debug, Clone)]
pub(super) struct Sampler {
    pub label: String,
    pub hz: u32,
    pub program: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Ready when this text is printed; None: when `file` exists.
    pub ready: Option<&'static str>,
    pub file: Option<PathBuf>,
}

#[derive(Debug)]
pub(super) struct Run {
    pub label: String,
    pub hz: u32,
    pub job_ms: f64,
    pub cpu_ms: f64,
    pub rss_kib: u64,
    pub bytes: u64,
    pub exit_ms: f64,
}

#[derive(Debug, Default)]
pub struct Phases {
    units: u32,
    untraced: Vec<f64>,
    runs: Vec<Run>,
    unavailable: Vec<String>,
    reports: Vec<(usize, f64)>,
}

fn job(program: &Path, units: u32) -> Result<f64> {
    let start = Instant::now();
    let status = Command::new(program).arg(units.to_string()).status()?;
    if !status.success() {
        bail!("cpu-job failed: {status}");
    }
    Ok(start.elapsed().as_secs_f64() * 1e3)
}

fn samplers(ours: &Path, scratch: &Path, hz: u32, unavailable: &mut Vec<String>) -> Vec<Sampler> {
    let f = hz.to_string();
    let mut all = vec![Sampler {
        label: "ours".into(),
        hz,
        program: ours.join("profile").display().to_string(),
        args: vec!["-F".into(), f.clone(), "-f".into()],
        env: Vec::new(),
        ready: Some("Sampling at"),
        file: None,
    }];
    all.push(Sampler {
        label: "bpftrace".into(),
        hz,
        program: "bpftrace".into(),
        args: vec![
            "-e".into(),
            format!("profile:hz:{hz} {{ @[kstack, ustack, comm] = count(); }}"),
        ],
        env: Vec::new(),
        ready: Some("Attaching"),
        file: None,
    });
    match super::peers::kernel_headers() {
        Ok(dir) => all.push(Sampler {
            label: "bcc".into(),
            hz,
            program: "/usr/sbin/profile-bpfcc".into(),
            // Multi-line: BCC prints no banner with -f.
            args: vec!["-F".into(), f.clone()],
            env: vec![
                ("PYTHONUNBUFFERED".into(), "1".into()),
                ("BCC_KERNEL_SOURCE".into(), dir.display().to_string()),
            ],
            ready: Some("Sampling at"),
            file: None,
        }),
        Err(e) if hz == 99 => unavailable.push(format!("bcc: no kernel headers: {e:#}")),
        Err(_) => {}
    }
    let data = scratch.join(format!("perf-{hz}.data"));
    let fold = if Command::new("inferno-collapse-perf")
        .arg("--help")
        .stdout(Stdio::null())
        .status()
        .is_ok()
    {
        "inferno-collapse-perf"
    } else {
        if hz == 99 {
            unavailable.push(
                "perf's fold: inferno-collapse-perf is missing (cargo install inferno); \
                 perf script alone is measured"
                    .into(),
            );
        }
        "cat"
    };
    // perf record stops at the group's SIGINT; the shell traps it, waits,
    // then post-processes as users do.
    let script = format!(
        "trap true INT; rm -f {d}; perf record -q -F {hz} -a -g -o {d} & p=$!; wait $p; wait $p; \
         perf script -i {d} 2>/dev/null | {fold}",
        d = data.display()
    );
    all.push(Sampler {
        label: "perf".into(),
        hz,
        program: "sh".into(),
        args: vec!["-c".into(), script],
        env: Vec::new(),
        ready: None,
        file: Some(data),
    });
    all
}

/// Counts the bytes of a stream, and notes when `ready` is seen.
fn reader(
    mut stream: impl Read + Send + 'static,
    ready: Option<&'static str>,
    seen: Arc<AtomicBool>,
    bytes: Arc<AtomicU64>,
    lines: Option<Arc<AtomicU64>>,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        let mut head = Vec::new();
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            bytes.fetch_add(n as u64, Ordering::Relaxed);
            if let Some(l) = &lines {
                l.fetch_add(
                    buf[..n].iter().filter(|b| **b == b'\n').count() as u64,
                    Ordering::Relaxed,
                );
            }
            if let (Some(text), false) = (ready, seen.load(Ordering::Relaxed)) {
                head.extend_from_slice(&buf[..n]);
                if String::from_utf8_lossy(&head).contains(text) {
                    seen.store(true, Ordering::Relaxed);
                }
            }
        }
    })
}

/// One sampler around `work`: the tool started and ready, the work done,
/// the tool interrupted and reaped with its resource usage.
struct Running {
    pid: i32,
    readers: Vec<thread::JoinHandle<()>>,
    bytes: Arc<AtomicU64>,
    lines: Arc<AtomicU64>,
}

impl Running {
    fn start(s: &Sampler) -> Result<Running> {
        let mut cmd = Command::new(&s.program);
        cmd.args(&s.args)
            .envs(s.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: prctl is async-signal-safe; the kernel kills the tool if
        // the bench dies first.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {}", s.program))?;
        let seen = Arc::new(AtomicBool::new(false));
        let bytes = Arc::new(AtomicU64::new(0));
        let lines = Arc::new(AtomicU64::new(0));
        let readers = vec![
            reader(
                child.stdout.take().unwrap(),
                s.ready,
                seen.clone(),
                bytes.clone(),
                Some(lines.clone()),
            ),
            reader(
                child.stderr.take().unwrap(),
                s.ready,
                seen.clone(),
                Arc::new(AtomicU64::new(0)),
                None,
            ),
        ];
        let pid = child.id() as i32;
        // The Child is not waited for: wait4 below reaps it.
        std::mem::forget(child);
        let r = Running {
            pid,
            readers,
            bytes,
            lines,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let ready = match (&s.file, s.ready) {
                (Some(f), _) => f.metadata().is_ok_and(|m| m.len() > 0),
                (None, _) => seen.load(Ordering::Relaxed),
            };
            if ready {
                break;
            }
            let mut status = 0;
            // SAFETY: waitpid on our own child, without blocking.
            if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
                bail!("{} exited before it was ready ({status:#x})", s.label);
            }
            if Instant::now() > deadline {
                r.kill();
                bail!("{} was not ready within 120 s", s.label);
            }
            thread::sleep(Duration::from_millis(20));
        }
        if s.file.is_some() {
            // perf has written its header; its events are being set up.
            thread::sleep(Duration::from_millis(500));
        }
        Ok(r)
    }

    fn kill(&self) {
        // SAFETY: kill(2) and waitpid on our own child's group.
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }

    /// Ctrl-C to the group; the time to the reaped exit, and the rusage of
    /// the tool and every descendant it waited for.
    fn stop(self) -> Result<(f64, libc::rusage, u64, u64)> {
        let sent = Instant::now();
        // SAFETY: kill(2) on our own child's process group.
        unsafe { libc::kill(-self.pid, libc::SIGINT) };
        let mut status = 0;
        // SAFETY: an all-zero rusage is valid; wait4 fills it.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own child, with valid out-pointers.
        let rc = unsafe { libc::wait4(self.pid, &mut status, 0, &mut usage) };
        let exit_ms = sent.elapsed().as_secs_f64() * 1e3;
        if rc != self.pid {
            bail!("wait4: {}", std::io::Error::last_os_error());
        }
        for r in self.readers {
            let _ = r.join();
        }
        Ok((
            exit_ms,
            usage,
            self.bytes.load(Ordering::Relaxed),
            self.lines.load(Ordering::Relaxed),
        ))
    }
}

fn ms(t: libc::timeval) -> f64 {
    t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3
}

fn run(s: &Sampler, program: &Path, units: u32) -> Result<Run> {
    run_around(s, || job(program, units))
}

/// `s` started and ready, `job` (its time in ms) run under it, `s` stopped
/// with its whole process tree's resource usage.
pub(super) fn run_around(s: &Sampler, job: impl FnOnce() -> Result<f64>) -> Result<Run> {
    let tool = Running::start(s)?;
    let job_ms = match job() {
        Ok(v) => v,
        Err(e) => {
            tool.kill();
            return Err(e);
        }
    };
    let (exit_ms, usage, bytes, _) = tool.stop()?;
    Ok(Run {
        label: s.label.clone(),
        hz: s.hz,
        job_ms,
        cpu_ms: ms(usage.ru_utime) + ms(usage.ru_stime),
        rss_kib: usage.ru_maxrss as u64,
        bytes,
        exit_ms,
    })
}

/// profile at 4999 Hz on `spread` (16384 paths) for 6 s: the stacks it
/// reported and the time from Ctrl-C to its exit.
fn report(ours: &Path, program: &Path) -> Result<(usize, f64)> {
    let s = Sampler {
        label: "ours".into(),
        hz: 4999,
        program: ours.join("profile").display().to_string(),
        args: ["-F", "4999", "-f", "--stack-storage-size", "65536"]
            .map(String::from)
            .to_vec(),
        env: Vec::new(),
        ready: Some("Sampling at"),
        file: None,
    };
    let tool = Running::start(&s)?;
    // Its own group: both of its processes are stopped and killed at once.
    let spread = Command::new(program)
        .args(["1000000", "spread"])
        .process_group(0)
        .spawn()
        .context("starting cpu-job spread")?;
    let group = spread.id() as i32;
    thread::sleep(Duration::from_secs(6));
    // Stopped first: the report then symbolizes live processes, as a
    // Ctrl-C on a running service does, but no new stack comes in.
    // SAFETY: kill(2) on the job's own process group.
    unsafe { libc::kill(-group, libc::SIGSTOP) };
    let result = tool.stop();
    // SAFETY: as above; then the job's processes are reaped (the worker,
    // orphaned, is ours: the bench is a subreaper). Nothing else of the
    // bench runs now.
    unsafe {
        libc::kill(-group, libc::SIGKILL);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            match libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) {
                -1 => break,
                0 => thread::sleep(Duration::from_millis(10)),
                _ => {}
            }
        }
    }
    let (exit_ms, _, _, lines) = result?;
    Ok((lines as usize, exit_ms))
}

pub fn phases(ours: &Path, scratch: &Path, rounds: usize, watch: &mut Watch) -> Result<Phases> {
    let program = super::workloads::build_cpu_job(scratch)?;
    // About 5 s untraced.
    let probe = job(&program, 2000)?;
    let units = ((5000.0 / probe) * 2000.0) as u32;
    println!("   sampling phases: cpu-job {units} (~5 s untraced, two processes)");
    let mut all = Phases {
        units,
        ..Phases::default()
    };
    let mut conditions: Vec<Option<Sampler>> = vec![None];
    for hz in [99, 999] {
        conditions.extend(
            samplers(ours, scratch, hz, &mut all.unavailable)
                .into_iter()
                .map(Some),
        );
    }
    for u in &all.unavailable {
        println!("   unavailable: {u}");
    }
    // Warm caches.
    job(&program, units)?;
    for round in 0..rounds {
        let mut order = conditions.clone();
        order.rotate_left(round % conditions.len());
        for c in order {
            let before = watch.before_condition()?;
            let label = c
                .as_ref()
                .map_or("untraced".into(), |s| format!("{} {} Hz", s.label, s.hz));
            match &c {
                None => {
                    let v = job(&program, units);
                    watch.after_condition(&before, "profile's sampling phase")?;
                    let v = v?;
                    println!("   [{}/{rounds}] {label:<18} job {v:.0} ms", round + 1);
                    all.untraced.push(v);
                }
                Some(s) => {
                    let r = run(s, &program, units);
                    watch.after_condition(&before, "profile's sampling phase")?;
                    match r {
                        Ok(r) => {
                            println!(
                                "   [{}/{rounds}] {label:<18} job {:.0} ms, CPU {:.0} ms, \
                                 RSS {} KiB, {} bytes, exit {:.0} ms",
                                round + 1,
                                r.job_ms,
                                r.cpu_ms,
                                r.rss_kib,
                                r.bytes,
                                r.exit_ms
                            );
                            all.runs.push(r);
                        }
                        Err(e) if s.label != "ours" => {
                            println!("   [{}/{rounds}] {label:<18} failed: {e:#}", round + 1);
                            all.unavailable.push(format!("{label}: {e:#}"));
                        }
                        Err(e) => return Err(e.context(label)),
                    }
                }
            }
        }
        let before = watch.before_condition()?;
        let r = report(ours, &program);
        watch.after_condition(&before, "profile's report phase")?;
        let (stacks, report_ms) = r.context("profile's report phase")?;
        println!(
            "   [{}/{rounds}] {:<18} {stacks} stacks reported in {report_ms:.0} ms",
            round + 1,
            "many stacks"
        );
        all.reports.push((stacks, report_ms));
    }
    Ok(all)
}

/// The figures for results.json.
pub fn extras(phases: &Result<Phases>) -> Value {
    let p = match phases {
        Ok(p) => p,
        Err(e) => return json!({ "sampling": { "error": format!("{e:#}") } }),
    };
    let spread = |v: Vec<f64>| Spread::of(&v).map(|s| s.to_json());
    let untraced = Spread::of(&p.untraced).map_or(f64::NAN, |s| s.median);
    let mut by = serde_json::Map::new();
    let mut seen: Vec<(String, u32)> = Vec::new();
    for r in &p.runs {
        if !seen.contains(&(r.label.clone(), r.hz)) {
            seen.push((r.label.clone(), r.hz));
        }
    }
    for (label, hz) in seen {
        let runs: Vec<&Run> = p
            .runs
            .iter()
            .filter(|r| r.label == label && r.hz == hz)
            .collect();
        let f = |g: &dyn Fn(&Run) -> f64| spread(runs.iter().map(|r| g(r)).collect());
        by.insert(
            format!("{label} {hz} Hz"),
            json!({
                "slowdown": f(&|r| r.job_ms / untraced),
                "cpu_ms": f(&|r| r.cpu_ms),
                "rss_kib": f(&|r| r.rss_kib as f64),
                "bytes": f(&|r| r.bytes as f64),
                "exit_ms": f(&|r| r.exit_ms),
            }),
        );
    }
    json!({ "sampling": {
        "what": "cpu-job.c (two processes, a fixed amount of work) untraced and under each \
                 sampler at 99 and 999 Hz, interleaved; CPU and peak RSS of the sampler's \
                 whole process tree (wait4), post-processing included; and profile's report \
                 of many distinct stacks (4999 Hz) after Ctrl-C",
        "units": p.units,
        "untraced_ms": spread(p.untraced.clone()),
        "by_sampler": by,
        "unavailable": p.unavailable,
        "report_stacks": spread(p.reports.iter().map(|r| r.0 as f64).collect()),
        "report_ms": spread(p.reports.iter().map(|r| r.1).collect()),
    }})
}

/// The extras as text lines for the console.
pub fn describe_extras(extras: &Value) -> Vec<String> {
    let s = &extras["sampling"];
    if let Some(e) = s["error"].as_str() {
        return vec![format!("sampling phases failed: {e}")];
    }
    let show = |v: &Value, decimals: usize| {
        Spread::from_json(v).map_or("-".to_string(), |v| v.show(decimals))
    };
    let mut lines = vec![format!(
        "sampling a CPU-bound job (untraced {} ms; median [min–max] over rounds):",
        show(&s["untraced_ms"], 0)
    )];
    if let Some(by) = s["by_sampler"].as_object() {
        for (name, v) in by {
            lines.push(format!(
                "  {name:<16} slowdown {}, CPU {} ms, peak RSS {} KiB, {} bytes out, exit {} ms",
                show(&v["slowdown"], 3),
                show(&v["cpu_ms"], 0),
                show(&v["rss_kib"], 0),
                show(&v["bytes"], 0),
                show(&v["exit_ms"], 0)
            ));
        }
    }
    lines.push(format!(
        "  report of many stacks: {} stacks in {} ms",
        show(&s["report_stacks"], 0),
        show(&s["report_ms"], 0)
    ));
    if let Some(u) = s["unavailable"].as_array() {
        for u in u.iter().filter_map(Value::as_str) {
            lines.push(format!("  unavailable: {u}"));
        }
    }
    lines
}
