//! `cargo xtask bench`: each tool against its libbpf-tools peer, side by
//! side in one run, reported as ratios. Numbers, not assertions.

use std::ffi::CString;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::{build_release, deps};

const LIBBPF_TOOLS: &str = "/usr/sbin";
/// A workload banner meaning: start-up ends when the tool holds its programs.
const LOADED: &str = "\0loaded";
const ROUNDS: usize = 3;

/// A workload the tools trace: runs once, returns its wall time; every
/// event it causes contains `marker` in the tool's output line.
struct Workload {
    name: &'static str,
    marker: String,
    events_per_round: u64,
    run: Box<dyn Fn() -> Duration + Send + Sync>,
    /// Causes one event (for the start-up measurement).
    one: Box<dyn Fn() + Send + Sync>,
    /// For aggregating tools, which print nothing per event: start-up ends
    /// at this line, printed once the programs are attached.
    banner: Option<&'static str>,
}

struct Sample {
    base: Duration,
    ready: Duration,
    peak_rss_kb: u64,
    traced: Duration,
    seen: u64,
    lost_note: String,
}

pub fn main(args: &[String]) -> Result<()> {
    if !crate::is_root() {
        bail!("bench loads BPF programs: run it as root");
    }
    deps(&[
        "libbpf-tools",
        "linux-perf",
        "fio",
        "bpftrace",
        "iproute2",
        "nftables",
    ])?;
    let wanted: Vec<&str> = if args.is_empty() {
        vec![
            "opensnoop",
            "execsnoop",
            "runqlat",
            "biolatency",
            "tcpretrans",
            "cachestat",
            "offcputime",
            "memleak",
        ]
    } else {
        args.iter().map(String::as_str).collect()
    };
    let names: Vec<String> = wanted.iter().map(|s| s.to_string()).collect();
    let ours = build_release(&names)?;
    // Not tmpfs: cachestat's workload needs a real page cache.
    let scratch = crate::root_dir()
        .join("target")
        .join(format!("bench-scratch-{}", std::process::id()));
    fs::create_dir_all(&scratch)?;
    let netns = Netns::new()?;

    println!(
        "{:<10} {:<6} {:>9} {:>9} {:>9} {:>9} {:>10} {:>12}",
        "tool", "impl", "1st ev ms", "RSS MiB", "base ms", "traced ms", "slowdown", "seen/sent"
    );
    let mut ratios = Vec::new();
    let mut memleak_notes = Vec::new();
    for tool in &wanted {
        if *tool == "memleak" {
            memleak_notes = memleak_bench(&ours.join("memleak"), &scratch)?;
            continue;
        }
        let workload = Arc::new(match *tool {
            "opensnoop" => open_loop(&scratch, 100_000)?,
            "execsnoop" => exec_loop(&scratch, 500)?,
            "runqlat" => command_workload(
                "perf bench sched pipe",
                "Tracing run queue latency",
                "perf",
                &["bench", "sched", "pipe", "-l", "100000"],
            ),
            "biolatency" => fio_randread(&scratch)?,
            "tcpretrans" => lossy_transfer(&netns)?,
            "cachestat" => cached_reads(&scratch)?,
            "offcputime" => command_workload(
                "perf bench sched pipe",
                LOADED,
                "perf",
                &["bench", "sched", "pipe", "-l", "100000"],
            ),
            other => bail!("no benchmark for '{other}'"),
        });
        let mut pair = Vec::new();
        for (label, bin) in [
            ("ours", ours.join(tool)),
            ("libbpf", Path::new(LIBBPF_TOOLS).join(tool)),
        ] {
            if !bin.exists() {
                println!("{tool:<10} {label:<6} (libbpf-tools has no {tool})");
                continue;
            }
            // The baseline is taken right before each traced run, so that
            // drift on a shared machine hits both alike.
            let base = median((0..ROUNDS).map(|_| (workload.run)()).collect());
            let s = match measure(&bin, &workload, base) {
                Ok(s) => s,
                // libbpf-tools' cachestat cannot load on 6.x kernels: say so.
                Err(e) if label == "libbpf" => {
                    println!("{tool:<10} {label:<6} does not run here: {e:#}");
                    continue;
                }
                Err(e) => return Err(e),
            };
            let sent = workload.events_per_round * ROUNDS as u64;
            println!(
                "{:<10} {:<6} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.2}x {:>12}{}",
                tool,
                label,
                s.ready.as_secs_f64() * 1e3,
                s.peak_rss_kb as f64 / 1024.0,
                s.base.as_secs_f64() * 1e3,
                s.traced.as_secs_f64() * 1e3,
                s.traced.as_secs_f64() / s.base.as_secs_f64(),
                if sent == 0 {
                    "-".to_string()
                } else {
                    format!("{}/{}", s.seen, sent)
                },
                if s.lost_note.is_empty() {
                    String::new()
                } else {
                    format!("  ({})", s.lost_note)
                }
            );
            pair.push(s);
        }
        ratios.push((tool.to_string(), workload.name, pair));
    }
    println!();
    println!("ratios, ours / libbpf-tools (below 1 is better for ours):");
    println!(
        "(start-up: to the first event, to the banner printed once attached, \
         or until the BPF programs are loaded)"
    );
    for (tool, what, pair) in &ratios {
        let slow = |s: &Sample| s.traced.as_secs_f64() / s.base.as_secs_f64();
        let [o, l] = pair.as_slice() else {
            println!(
                "  {tool}: no working libbpf-tools peer; {what} runs at {:.3}x its speed untraced",
                1.0 / slow(&pair[0])
            );
            continue;
        };
        println!(
            "  {tool}: start-up {:.2}, peak RSS {:.2}, {what} slowdown {:.2} ({:.2}x vs {:.2}x)",
            o.ready.as_secs_f64() / l.ready.as_secs_f64(),
            o.peak_rss_kb as f64 / l.peak_rss_kb as f64,
            slow(o) / slow(l),
            slow(o),
            slow(l)
        );
    }
    for note in &memleak_notes {
        println!("  memleak: {note}");
    }
    let _ = fs::remove_dir_all(&scratch);
    drop(netns);
    Ok(())
}

/// A malloc+free loop that waits for a line on stdin, then prints the mean
/// nanoseconds per pair.
const MALLOC_LOOP_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv)
{
	long n = atol(argv[1]);
	char line[8];
	struct timespec a, b;
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++) {
		void *p = malloc(64);
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	fflush(stdout);
	return 0;
}
"#;

/// Leaks one block from each of 10000 distinct call paths (14 levels of
/// two call sites each), then waits: memleak's report phase at scale.
const MANY_STACKS_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((noinline)) void *leaf(void) { return malloc(32); }
void *right(int depth, unsigned bits);
__attribute__((noinline)) void *left(int depth, unsigned bits)
{
	void *p = depth == 0 ? leaf() : (bits & 1) ? left(depth - 1, bits >> 1) : right(depth - 1, bits >> 1);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}
__attribute__((noinline)) void *right(int depth, unsigned bits)
{
	void *p = depth == 0 ? leaf() : (bits & 1) ? left(depth - 1, bits >> 1) : right(depth - 1, bits >> 1);
	__asm__ volatile("" : : "r"(p) : "memory");
	return p;
}
int main(void)
{
	char line[8];
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (unsigned i = 0; i < 10000; i++)
		left(14, i);
	printf("done\n");
	fflush(stdout);
	pause();
	return 0;
}
"#;

fn compile_c(dir: &Path, name: &str, source: &str) -> Result<PathBuf> {
    let src = dir.join(format!("{name}.c"));
    let bin = dir.join(name);
    fs::write(&src, source)?;
    crate::check(
        Command::new("cc")
            .args([
                "-O0",
                "-g",
                "-fno-omit-frame-pointer",
                "-fno-optimize-sibling-calls",
                "-o",
            ])
            .arg(&bin)
            .arg(&src),
    )?;
    Ok(bin)
}

/// A C helper started and held at its "ready" line.
struct Helper {
    child: Child,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Helper {
    fn start(bin: &Path, args: &[&str]) -> Result<Helper> {
        let mut child = Command::new(bin)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().transpose()?;
        if first.as_deref() != Some("ready") {
            bail!("{} did not start", bin.display());
        }
        Ok(Helper { child, lines })
    }

    /// Lets it go and returns its next output line.
    fn go(&mut self) -> Result<String> {
        writeln!(self.child.stdin.as_mut().unwrap(), "go")?;
        Ok(self.lines.next().transpose()?.unwrap_or_default())
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `memleak args` and waits for its banner on stderr; returns the
/// child and a handle on the rest of its stderr.
fn start_memleak(bin: &Path, args: &[&str]) -> Result<(Child, thread::JoinHandle<String>)> {
    let mut child = Command::new(bin)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // With -f the banner goes to stderr.
    let mut said = Vec::new();
    loop {
        match lines.next() {
            Some(Ok(l)) if l.starts_with("Attaching to") => break,
            Some(Ok(l)) => said.push(l),
            _ => bail!(
                "memleak ended before attaching: {}",
                said.last().map_or("", String::as_str)
            ),
        }
    }
    let rest = thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>().join("\n"));
    Ok((child, rest))
}

/// memleak's cost per malloc+free (a process traced with -p against the
/// same process untraced), and its report phase for 10k unique stacks.
fn memleak_bench(bin: &Path, scratch: &Path) -> Result<Vec<String>> {
    let looper = compile_c(scratch, "bench-malloc-loop", MALLOC_LOOP_C)?;
    let stacks = compile_c(scratch, "bench-many-stacks", MANY_STACKS_C)?;
    let n = "2000000";
    // Traced by: nothing, ours, or bpftrace with empty probes on the
    // same three traps (malloc entry and return, free): the floor any
    // uprobe-based tool pays on this machine.
    #[derive(PartialEq)]
    enum By {
        Nothing,
        Ours,
        EmptyProbes,
    }
    let per_pair = |by: By| -> Result<f64> {
        let mut helper = Helper::start(&looper, &[n])?;
        let pid = helper.child.id().to_string();
        let mut tracer = match by {
            By::Nothing => None,
            By::Ours => Some(start_memleak(bin, &["-p", &pid, "-f", "3600"])?.0),
            By::EmptyProbes => {
                let lib = libc_path(&pid)?;
                let script = format!(
                    "uprobe:{lib}:malloc {{}} uretprobe:{lib}:malloc {{}} uprobe:{lib}:free {{}}"
                );
                let mut child = Command::new("bpftrace")
                    .args(["-p", &pid, "-e", &script])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null())
                    .spawn()
                    .context("starting bpftrace")?;
                let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
                while let Some(Ok(l)) = lines.next() {
                    if l.starts_with("Attaching") {
                        break;
                    }
                }
                Some(child)
            }
        };
        thread::sleep(Duration::from_millis(300));
        let ns: f64 = helper.go()?.trim().parse().context("the loop's timing")?;
        if let Some(child) = tracer.as_mut() {
            // SAFETY: kill with our child's pid and a valid signal.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            child.wait()?;
        }
        Ok(ns)
    };
    let median_of = |by: fn() -> By| -> Result<f64> {
        Ok(median_f64(
            (0..ROUNDS).map(|_| per_pair(by())).collect::<Result<_>>()?,
        ))
    };
    let base = median_of(|| By::Nothing)?;
    let traced = median_of(|| By::Ours)?;
    let floor = median_of(|| By::EmptyProbes)?;
    let mut notes = vec![format!(
        "malloc+free {:.2} us traced vs {:.3} us untraced ({:.0}x); empty probes on the \
         same three traps (bpftrace): {:.2} us, so memleak's own work costs {:.2} us per pair",
        traced / 1e3,
        base / 1e3,
        traced / base,
        floor / 1e3,
        (traced - floor) / 1e3
    )];

    let mut helper = Helper::start(&stacks, &[])?;
    let pid = helper.child.id().to_string();
    let (mut child, rest) = start_memleak(
        bin,
        &[
            "-p",
            &pid,
            "-f",
            "-v",
            "-o",
            "0",
            "-T",
            "20000",
            "--stack-storage-size",
            "262144",
            "3",
            "1",
        ],
    )?;
    thread::sleep(Duration::from_millis(300));
    helper.go()?;
    child.wait()?;
    let stderr = rest.join().unwrap_or_default();
    let report = stderr
        .lines()
        .find(|l| l.contains("report:"))
        .unwrap_or("no report line")
        .to_string();
    notes.push(format!("report phase, 10000 unique stacks: {report}"));
    Ok(notes)
}

/// The libc a process maps, for bpftrace's probe specifications.
fn libc_path(pid: &str) -> Result<String> {
    let maps = fs::read_to_string(format!("/proc/{pid}/maps"))?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.ends_with("/libc.so.6"))
        .map(String::from)
        .context("no libc.so.6 mapped")
}

fn median_f64(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A network namespace whose loopback drops 2% of the data segments sent
/// to port 5001 (nftables): the tcpretrans workload. Deleted on drop.
struct Netns {
    name: String,
}

impl Netns {
    fn new() -> Result<Netns> {
        let ns = Netns {
            name: format!("bpfbench{}", std::process::id()),
        };
        crate::check(Command::new("ip").args(["netns", "add", &ns.name]))?;
        crate::check(
            Command::new("ip").args(["-n", &ns.name, "link", "set", "lo", "up", "mtu", "1500"]),
        )?;
        let rules = "table inet bench {\n chain input {\n \
            type filter hook input priority 0; policy accept;\n \
            tcp dport 5001 tcp flags & syn == 0 numgen random mod 100 < 2 drop\n }\n}\n";
        let mut nft = Command::new("ip")
            .args(["netns", "exec", &ns.name, "nft", "-f", "-"])
            .stdin(Stdio::piped())
            .spawn()?;
        nft.stdin.take().unwrap().write_all(rules.as_bytes())?;
        if !nft.wait()?.success() {
            bail!("nft refused the bench's drop rule");
        }
        Ok(ns)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// 20 MB over a lossy loopback TCP connection, in 1000-byte writes.
fn lossy_transfer(ns: &Netns) -> Result<Workload> {
    let path = format!("/run/netns/{}", ns.name);
    let transfer = move || {
        let path = path.clone();
        thread::spawn(move || {
            use std::io::{Read, Write};
            use std::os::fd::AsRawFd;
            let ns = fs::File::open(&path).unwrap();
            // SAFETY: a valid namespace fd; setns moves only this thread.
            let rc = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(rc, 0, "setns");
            let listener = std::net::TcpListener::bind("127.0.0.1:5001").unwrap();
            let start = Instant::now();
            let mut client = std::net::TcpStream::connect("127.0.0.1:5001").unwrap();
            client.set_nodelay(true).unwrap();
            let (mut server, _) = listener.accept().unwrap();
            let reader = thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                while server.read(&mut buf).is_ok_and(|n| n > 0) {}
            });
            let chunk = [b'x'; 1000];
            for _ in 0..20_000 {
                client.write_all(&chunk).unwrap();
            }
            drop(client);
            reader.join().unwrap();
            start.elapsed()
        })
        .join()
        .unwrap()
    };
    Ok(Workload {
        name: "lossy loopback transfer",
        marker: "127.0.0.1:5001".into(),
        events_per_round: 0,
        one: Box::new(|| {}),
        banner: Some("TIME"),
        run: Box::new(transfer),
    })
}

/// Re-reads a cached 64 MiB file 100 times: page cache hits only (one
/// mm_filemap_get_pages per 128 KiB read).
fn cached_reads(dir: &Path) -> Result<Workload> {
    let file = dir.join("bench-cached");
    fs::write(&file, vec![7u8; 64 << 20])?;
    Ok(Workload {
        name: "cached file re-read",
        marker: String::new(),
        events_per_round: 0,
        one: Box::new(|| {}),
        banner: Some("HITS"),
        run: Box::new(move || {
            use std::io::Read;
            let mut buf = vec![0u8; 128 << 10];
            let start = Instant::now();
            for _ in 0..100 {
                let mut f = fs::File::open(&file).unwrap();
                while f.read(&mut buf).is_ok_and(|n| n > 0) {}
            }
            start.elapsed()
        }),
    })
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// open()+close() of one file in a tight loop.
fn open_loop(dir: &Path, n: u64) -> Result<Workload> {
    let path = dir.join("bench-open-target");
    fs::write(&path, b"x")?;
    let marker = path.to_string_lossy().into_owned();
    let cpath = CString::new(marker.clone())?;
    let one_path = path.clone();
    Ok(Workload {
        name: "open()+close() loop",
        marker,
        events_per_round: n,
        one: Box::new(move || {
            let _ = fs::File::open(&one_path);
        }),
        banner: None,
        run: Box::new(move || {
            let start = Instant::now();
            for _ in 0..n {
                // SAFETY: a valid C string; the fd is closed right away.
                unsafe {
                    let fd = libc::open(cpath.as_ptr(), libc::O_RDONLY);
                    if fd >= 0 {
                        libc::close(fd);
                    }
                }
            }
            start.elapsed()
        }),
    })
}

/// fork+exec of a tiny program, one after another.
fn exec_loop(dir: &Path, n: u64) -> Result<Workload> {
    let prog: PathBuf = dir.join("bench-exec-true");
    fs::copy("/bin/true", &prog)?;
    let marker = prog.to_string_lossy().into_owned();
    let one_prog = prog.clone();
    Ok(Workload {
        name: "exec loop",
        marker,
        events_per_round: n,
        one: Box::new(move || {
            let _ = Command::new(&one_prog).status();
        }),
        banner: None,
        run: Box::new(move || {
            let start = Instant::now();
            for _ in 0..n {
                let _ = Command::new(&prog).status();
            }
            start.elapsed()
        }),
    })
}

/// An external benchmark command, timed as a whole.
fn command_workload(
    name: &'static str,
    banner: &'static str,
    program: &'static str,
    args: &'static [&'static str],
) -> Workload {
    Workload {
        name,
        marker: String::new(),
        events_per_round: 0,
        one: Box::new(|| {}),
        banner: Some(banner),
        run: Box::new(move || {
            let start = Instant::now();
            let out = Command::new(program).args(args).output();
            assert!(out.is_ok_and(|o| o.status.success()), "{program} failed");
            start.elapsed()
        }),
    }
}

/// fio: 4 KiB random O_DIRECT reads at queue depth 1 on a 64 MiB file.
fn fio_randread(dir: &Path) -> Result<Workload> {
    let file = dir.join("bench-fio");
    fs::write(&file, vec![1u8; 64 << 20])?;
    let filename: &'static str =
        Box::leak(format!("--filename={}", file.display()).into_boxed_str());
    let args: &'static [&'static str] = Box::leak(Box::new([
        "--name=randread",
        filename,
        "--rw=randread",
        "--bs=4k",
        "--direct=1",
        "--iodepth=1",
        "--ioengine=psync",
        "--size=64M",
        "--io_size=48M",
        "--output-format=terse",
    ]));
    Ok(command_workload(
        "fio 4k randread QD1",
        "Tracing block device I/O",
        "fio",
        args,
    ))
}

fn peak_rss_kb(pid: u32) -> u64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Time from spawning the tool to the first event it prints, with events
/// fired every 2 ms. libbpf-tools' stdio buffers a pipe fully, so it runs
/// under `stdbuf -oL` here (ours flushes after each batch by itself).
fn time_to_first_event(bin: &Path, w: &Arc<Workload>) -> Result<Duration> {
    let start = Instant::now();
    let mut cmd = if bin.starts_with(LIBBPF_TOOLS) {
        let mut c = Command::new("stdbuf");
        c.arg("-oL").arg(bin);
        c
    } else {
        Command::new(bin)
    };
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    // A tool that prints nothing until it ends (libbpf-tools' offcputime)
    // is ready once it holds its BPF programs: attaching follows at once.
    if w.banner == Some(LOADED) {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        while bpf_programs_held(child.id()) == 0 {
            if start.elapsed() > Duration::from_secs(30) || child.try_wait()?.is_some() {
                let _ = child.kill();
                bail!("{} loaded nothing", bin.display());
            }
            thread::sleep(Duration::from_millis(1));
        }
        let took = start.elapsed();
        let _ = child.kill();
        let _ = child.wait();
        return Ok(took);
    }
    let marker = w.banner.map_or(w.marker.as_str(), |b| b);
    let done = Arc::new(std::sync::atomic::AtomicBool::new(w.banner.is_some()));
    let (done2, w2) = (done.clone(), w.clone());
    let firing = thread::spawn(move || {
        while !done2.load(Ordering::Relaxed) && start.elapsed() < Duration::from_secs(30) {
            (w2.one)();
            thread::sleep(Duration::from_millis(2));
        }
    });
    let stdout = child.stdout.take().unwrap();
    let mut took = None;
    for line in BufReader::new(stdout).lines().map_while(Result::ok) {
        if line.contains(marker) {
            took = Some(start.elapsed());
            break;
        }
    }
    done.store(true, Ordering::Relaxed);
    let _ = child.kill();
    let _ = child.wait();
    let _ = firing.join();
    took.with_context(|| format!("{} printed no event", bin.display()))
}

/// The number of BPF programs a process holds, from /proc/PID/fdinfo.
fn bpf_programs_held(pid: u32) -> usize {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/fdinfo")) else {
        return 0;
    };
    dir.filter_map(|e| fs::read_to_string(e.ok()?.path()).ok())
        .filter(|info| info.lines().any(|l| l.starts_with("prog_id:")))
        .count()
}

fn measure(bin: &Path, w: &Arc<Workload>, base: Duration) -> Result<Sample> {
    let ready = time_to_first_event(bin, w)?;
    let start = Instant::now();
    let mut child: Child = Command::new(bin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", bin.display()))?;
    let seen = Arc::new(AtomicU64::new(0));
    let stdout = child.stdout.take().unwrap();
    let (seen2, marker) = (seen.clone(), w.marker.clone());
    let reader = thread::spawn(move || {
        let lines = BufReader::with_capacity(1 << 20, stdout).lines();
        for line in lines.map_while(Result::ok) {
            if line.contains(&marker) {
                seen2.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    let stderr = child.stderr.take().unwrap();
    let err_reader = thread::spawn(move || {
        let mut s = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("lost") {
                s.push_str(line.trim());
                s.push(' ');
            }
        }
        s
    });
    // Attached once its programs are loaded; attaching follows at once.
    while bpf_programs_held(child.id()) == 0 {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            bail!("{} loaded nothing within 30 s", bin.display());
        }
        if let Some(status) = child.try_wait()? {
            bail!("{} exited early: {status}", bin.display());
        }
        thread::sleep(Duration::from_millis(1));
    }
    thread::sleep(Duration::from_millis(300));
    let traced = median((0..ROUNDS).map(|_| (w.run)()).collect());
    // Let the tool drain what is queued before it is stopped.
    thread::sleep(Duration::from_millis(500));
    let peak_rss_kb = peak_rss_kb(child.id());
    // SAFETY: kill with our child's pid and a valid signal.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait()?;
    reader.join().ok();
    let lost_note = err_reader.join().unwrap_or_default();
    Ok(Sample {
        base,
        ready,
        peak_rss_kb,
        traced,
        seen: seen.load(Ordering::Relaxed),
        lost_note: lost_note.trim().chars().take(60).collect(),
    })
}
