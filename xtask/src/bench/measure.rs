//! One condition, measured once: the workload untraced, or traced by one
//! tool, spawned once, watched from spawn to reaped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::bpf_stats::{self, ProgStat};
use super::proc::{self, Guarded};
use super::workloads::{Probe, Workload};

/// A tool's start-up: BCC compiles its C program first, on a shared machine.
const READY_LIMIT: Duration = Duration::from_secs(120);
/// Time for the tool to finish what follows attaching (headers, caches),
/// and the same pause untraced, so both see the same machine state.
const SETTLE: Duration = Duration::from_millis(300);
/// How long printed events may keep coming after the workload.
const DRAIN_QUIET: Duration = Duration::from_millis(500);
const DRAIN_LIMIT: Duration = Duration::from_secs(30);
const EXIT_LIMIT: Duration = Duration::from_secs(30);

/// When a tool counts as started.
#[derive(Debug, Clone)]
pub enum Ready {
    /// Its first line for the workload's probe event (tools printing events).
    FirstEvent,
    /// A line it prints once attached (a banner or header).
    Line(String),
    /// It holds BPF programs: for tools that print nothing until they end.
    HoldsPrograms,
}

impl Ready {
    pub fn describe(&self) -> &'static str {
        match self {
            Ready::FirstEvent => "spawn to first event",
            Ready::Line(_) => "spawn to the attached banner",
            Ready::HoldsPrograms => "spawn until its BPF programs are loaded",
        }
    }
}

/// How to start a tool. In `args`, `{pid}` is the workload's process and
/// `{libc}` the libc it maps.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub ready: Ready,
}

impl Launch {
    fn command(&self, pid: Option<u32>) -> Result<Command> {
        let mut cmd = Command::new(&self.program);
        for arg in &self.args {
            let mut arg = arg.clone();
            if arg.contains("{pid}") || arg.contains("{libc}") {
                let pid = pid.context("this tool follows a process, and the workload has none")?;
                arg = arg.replace("{pid}", &pid.to_string());
                if arg.contains("{libc}") {
                    arg = arg.replace("{libc}", &libc_of(pid)?);
                }
            }
            cmd.arg(arg);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        Ok(cmd)
    }

    /// The command line, as run (placeholders left in).
    pub fn shown(&self) -> String {
        let env: String = self.env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
        format!("{env}{} {}", self.program.display(), self.args.join(" "))
            .trim()
            .to_string()
    }
}

/// The libc a process maps, for uprobe specifications.
fn libc_of(pid: u32) -> Result<String> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libc.so") || p.contains("/libc-"))
        .map(String::from)
        .with_context(|| format!("pid {pid} maps no libc"))
}

/// What one condition measured in one round.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// The workload's figure, in its unit.
    pub value: f64,
    pub startup_ms: Option<f64>,
    /// The tool's CPU time from attached to just before the stop.
    pub cpu_ms: Option<f64>,
    pub peak_rss_kib: Option<u64>,
    /// SIGINT to reaped.
    pub exit_ms: Option<f64>,
    pub events_seen: Option<u64>,
    /// Lost or dropped events the tool reported, and anything odd.
    pub notes: Vec<String>,
    /// The tracer's BPF programs' counters, read before it was stopped.
    pub bpf_programs: Vec<ProgStat>,
}

pub fn untraced(w: &Workload) -> Result<Run> {
    let mut target = w.start()?;
    thread::sleep(SETTLE);
    let value = target.run()?;
    Ok(Run {
        value,
        ..Run::default()
    })
}

pub fn traced(w: &Workload, launch: &Launch) -> Result<Run> {
    // Started first: a tool following a process needs its pid.
    let mut target = w.start()?;
    let cmd = launch.command(target.pid())?;
    let count = w.events.as_ref().map(|e| e.marker.clone());
    let ready_line = match &launch.ready {
        Ready::FirstEvent => Some(
            w.probe
                .as_ref()
                .context("start-up at the first event needs a workload that causes one")?
                .marker
                .clone(),
        ),
        Ready::Line(line) => Some(line.clone()),
        Ready::HoldsPrograms => None,
    };
    // Its programs are the ones loaded after these.
    let progs_before = bpf_stats::loaded_ids();
    let mut tracer = Tracer::spawn(cmd, ready_line, count)?;
    let startup = tracer.wait_ready(&launch.ready, w.probe.as_ref())?;
    let pid = tracer.proc.id();
    let cpu_at_attach = proc::cpu_ns(pid);

    thread::sleep(SETTLE);
    let before = tracer.events();
    let value = target.run()?;
    tracer.drain(before, w.events.as_ref().and_then(|e| e.sent));
    if let Some(status) = tracer.proc.child().try_wait()? {
        bail!(
            "exited during the workload ({status}): {}",
            tracer.last_words()
        );
    }
    let peak_rss_kib = proc::peak_rss_kib(pid);
    let cpu_at_stop = proc::cpu_ns(pid);
    // While it is attached: stopping it unloads its programs.
    let bpf_programs = bpf_stats::since(&progs_before);
    let exit = tracer.proc.interrupt(EXIT_LIMIT)?;
    // Counted once the readers have taken the last of its output.
    let mut out = tracer.finish();
    let events = out.events - before;
    if exit.is_none() {
        out.notes.push(format!(
            "did not end within {EXIT_LIMIT:?} of SIGINT: killed"
        ));
    }
    // The workload's process goes after the tool: a tool following it must
    // not see it end while measured.
    drop(target);
    Ok(Run {
        value,
        startup_ms: Some(startup.as_secs_f64() * 1e3),
        cpu_ms: cpu_at_attach
            .zip(cpu_at_stop)
            .map(|(a, b)| b.saturating_sub(a) as f64 / 1e6),
        peak_rss_kib,
        exit_ms: exit.map(|d| d.as_secs_f64() * 1e3),
        events_seen: w.events.as_ref().map(|_| events),
        notes: out.notes,
        bpf_programs,
    })
}

/// What the tool's output showed so far.
#[derive(Default)]
pub struct Output {
    ready_at: Option<Instant>,
    pub events: u64,
    /// Lines about lost or dropped events (the first few).
    pub notes: Vec<String>,
    /// The last lines that were not events, per stream (stdout, stderr):
    /// kept apart, since the two are read concurrently and a flood on one
    /// must not push the other's last words out.
    pub tails: [VecDeque<String>; 2],
}

const TAIL_LINES: usize = 30;
/// Words that mark a line as the error itself.
const ERROR_WORDS: &[&str] = &[
    "error",
    "fail",
    "exception",
    "not permitted",
    "denied",
    "cannot",
    "unable",
];
const MAX_NOTES: usize = 5;

impl Output {
    /// One line from stream `stream` (0 stdout, 1 stderr).
    fn line(&mut self, stream: usize, line: &str, ready: Option<&str>, count: Option<&str>) {
        if self.ready_at.is_none() && ready.is_some_and(|r| line.contains(r)) {
            self.ready_at = Some(Instant::now());
        }
        if count.is_some_and(|c| line.contains(c)) {
            self.events += 1;
            return;
        }
        let lower = line.to_ascii_lowercase();
        if (lower.contains("lost") || lower.contains("dropped")) && self.notes.len() < MAX_NOTES {
            self.notes.push(line.trim().chars().take(120).collect());
        }
        let tail = &mut self.tails[stream];
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line.to_string());
    }
}

/// A running tool with both output streams read line by line.
pub struct Tracer {
    pub proc: Guarded,
    spawned: Instant,
    output: Arc<Mutex<Output>>,
    readers: Vec<JoinHandle<()>>,
}

impl Tracer {
    /// `ready`: the line that marks it started; `count`: the marker of an event line.
    pub fn spawn(mut cmd: Command, ready: Option<String>, count: Option<String>) -> Result<Tracer> {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let spawned = Instant::now();
        let mut proc = Guarded::spawn(&mut cmd)?;
        let output = Arc::new(Mutex::new(Output::default()));
        let child = proc.child();
        let streams: Vec<Box<dyn Read + Send>> = vec![
            Box::new(child.stdout.take().unwrap()),
            Box::new(child.stderr.take().unwrap()),
        ];
        let readers = streams
            .into_iter()
            .enumerate()
            .map(|(index, stream)| {
                let (output, ready, count) = (output.clone(), ready.clone(), count.clone());
                thread::spawn(move || {
                    // Large reads: a slow reader would stall the tool, not the workload.
                    let mut reader = BufReader::with_capacity(1 << 20, stream);
                    let mut buf = Vec::new();
                    while reader.read_until(b'\n', &mut buf).is_ok_and(|n| n > 0) {
                        let line = String::from_utf8_lossy(&buf);
                        output.lock().unwrap().line(
                            index,
                            line.trim_end(),
                            ready.as_deref(),
                            count.as_deref(),
                        );
                        buf.clear();
                    }
                })
            })
            .collect();
        Ok(Tracer {
            proc,
            spawned,
            output,
            readers,
        })
    }

    /// Waits until the tool is started; returns the time since spawn.
    pub fn wait_ready(&mut self, ready: &Ready, probe: Option<&Probe>) -> Result<Duration> {
        let stop = Arc::new(AtomicBool::new(false));
        // Events fired every 2 ms: the first one printed ends start-up.
        let firing = match (ready, probe) {
            (Ready::FirstEvent, Some(probe)) => {
                let (stop, fire) = (stop.clone(), probe.fire.clone());
                Some(thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        fire();
                        thread::sleep(Duration::from_millis(2));
                    }
                }))
            }
            _ => None,
        };
        let result = self.poll_ready(ready);
        stop.store(true, Ordering::Relaxed);
        if let Some(f) = firing {
            let _ = f.join();
        }
        result
    }

    fn poll_ready(&mut self, ready: &Ready) -> Result<Duration> {
        loop {
            match ready {
                Ready::HoldsPrograms => {
                    if !proc::prog_ids_held(self.proc.id()).is_empty() {
                        return Ok(self.spawned.elapsed());
                    }
                }
                _ => {
                    if let Some(at) = self.output.lock().unwrap().ready_at {
                        return Ok(at - self.spawned);
                    }
                }
            }
            if let Some(status) = self.proc.child().try_wait()? {
                // Let the readers take the last of its output.
                thread::sleep(Duration::from_millis(50));
                bail!(
                    "exited before it was ready ({status}): {}",
                    self.last_words()
                );
            }
            if self.spawned.elapsed() > READY_LIMIT {
                bail!("not ready within {READY_LIMIT:?}: {}", self.last_words());
            }
            thread::sleep(Duration::from_micros(500));
        }
    }

    pub fn events(&self) -> u64 {
        self.output.lock().unwrap().events
    }

    /// Lets the tool print what is still queued: until every event sent
    /// since `before` is seen, or nothing new came for a while.
    fn drain(&self, before: u64, sent: Option<u64>) {
        let start = Instant::now();
        let (mut last, mut last_change) = (self.events(), Instant::now());
        while start.elapsed() < DRAIN_LIMIT && last_change.elapsed() < DRAIN_QUIET {
            if sent.is_some_and(|sent| last - before >= sent) {
                return;
            }
            thread::sleep(Duration::from_millis(10));
            let now = self.events();
            if now != last {
                (last, last_change) = (now, Instant::now());
            }
        }
    }

    /// Why it failed, in a line: of what it printed at the left margin
    /// (indented lines are tables and tracebacks), the first error and the
    /// last line; for a Python traceback, the functions it was raised in.
    pub fn last_words(&self) -> String {
        let out = self.output.lock().unwrap();
        // Errors go to stderr; a tool that said nothing there, to stdout.
        let tail = if out.tails[1].is_empty() {
            &out.tails[0]
        } else {
            &out.tails[1]
        };
        let said: Vec<&str> = tail
            .iter()
            .filter(|l| !l.trim().is_empty() && !l.starts_with(char::is_whitespace))
            .filter(|l| !l.starts_with("Traceback") && !l.contains("RLIMIT_MEMLOCK"))
            .map(|l| l.trim())
            .collect();
        let first_error = said.iter().find(|l| {
            let l = l.to_ascii_lowercase();
            ERROR_WORDS.iter().any(|w| l.contains(w))
        });
        let mut picked: Vec<&str> = first_error
            .into_iter()
            .chain(said.last())
            .copied()
            .collect();
        picked.dedup();
        let mut words = picked.join(" / ");
        let frames: Vec<&str> = tail
            .iter()
            .filter(|l| l.trim_start().starts_with("File \""))
            .filter_map(|l| l.rsplit_once(", in ").map(|(_, f)| f.trim()))
            .collect();
        if !frames.is_empty() {
            let last = &frames[frames.len().saturating_sub(3)..];
            words += &format!(" (raised in {})", last.join(" > "));
        }
        if words.is_empty() {
            words = tail
                .back()
                .map_or("(no output)".into(), |l| l.trim().to_string());
        }
        words.chars().take(300).collect()
    }

    /// After the process ended: its complete output.
    pub fn finish(mut self) -> Output {
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        std::mem::take(&mut *self.output.lock().unwrap())
    }
}
