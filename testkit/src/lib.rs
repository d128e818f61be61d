//! The tools' test support (a dev-dependency): run the real binary, wait
//! until it is attached, stop it like a user would, and read what it
//! printed; the contract every tool passes ([`contract`]), and the real
//! consumers of the exports ([`prometheus`], [`pprof`]).

pub mod block;
pub mod contract;
pub mod outfiles;
pub mod pagecache;
pub mod pingpong;
pub mod pprof;
pub mod prometheus;
pub mod stacks;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Held by a test while it runs a tool, where a crate's tests must not
/// run tools side by side: profile's samplers; the file and TCP tools'
/// fentry/fexit programs and kprobes, whose trampolines and breakpoints on
/// the same kernel function are rewritten at each attach and detach (two at
/// once locked up a 6.1 guest under qemu's TCG, and made tcptop miss bytes
/// there).
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `jobs` on `width` threads at most and returns when all have ended;
/// a job's panic is the caller's (the scope re-raises it). For checks that
/// each run a tool to its end and mostly wait on it (the contract's output
/// files and hostile values): side by side they take a fraction of the time.
pub fn in_parallel<'a>(width: usize, jobs: Vec<Box<dyn FnOnce() + Send + 'a>>) {
    let queue = Mutex::new(jobs.into_iter());
    thread::scope(|s| {
        for _ in 0..width.max(1) {
            s.spawn(|| loop {
                let Some(job) = queue.lock().unwrap_or_else(|e| e.into_inner()).next() else {
                    break;
                };
                job();
            });
        }
    });
}

/// Waits until process `pid` has stopped itself (a workload that raises
/// SIGSTOP so that a tool can start with -p on it first); panics after
/// 120 s (numamove's workload, which touches a GiB first, took over 30 s
/// in a TCG guest beside another).
pub fn wait_stopped(pid: u32) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let state = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap();
        if state == "T" {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{pid} never stopped: {stat}"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Runs a workload that stops itself before its work (`raise(SIGSTOP)`)
/// under a tool started on its pid (`tool(pid)`), so the tool sees all of
/// its work: continued once the tool is attached, reaped, then the tool
/// stopped and checked to leave nothing loaded. Both must succeed.
pub fn trace_stopped(workload: &mut Command, tool: impl FnOnce(u32) -> Command) -> Finished {
    let mut work = workload.stdin(Stdio::null()).spawn().unwrap();
    let pid = work.id();
    wait_stopped(pid);
    let traced = Traced::start_command(&mut tool(pid));
    // SAFETY: kill with a child pid we own.
    unsafe { libc::kill(pid as i32, libc::SIGCONT) };
    let status = work.wait().unwrap();
    assert!(status.success(), "{workload:?}: {status:?}");
    std::thread::sleep(Duration::from_millis(100));
    let f = stop_and_check_unloaded(traced);
    assert!(f.status.success(), "{f:?}");
    f
}

/// [`trace_stopped`] with the tool `bin` tracing the workload's pid
/// (`args`, then `-p PID`), the hooks in `disable` off
/// (BPFTOOLS_DISABLE), and `place` given the stopped workload's pid first
/// (into a cgroup, say); the tool's run and the workload's pid.
pub fn trace_pid(
    workload: &mut Command,
    bin: &str,
    args: &[&str],
    disable: &str,
    place: impl FnOnce(u32),
) -> (Finished, u32) {
    let mut pid = 0;
    let f = trace_stopped(workload, |p| {
        pid = p;
        place(p);
        let mut tool = Command::new(bin);
        tool.args(args)
            .args(["-p", &p.to_string()])
            .env("BPFTOOLS_DISABLE", disable);
        tool
    });
    (f, pid)
}

/// Fails the test unless it runs as root: a root test must never pass
/// without running.
pub fn require_root() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        panic!(
            "this test loads BPF programs and must run as root; \
             run the suite with `cargo xtask test`"
        );
    }
}

/// The running kernel's major and minor version (6 and 1 for
/// 6.1.0-56-amd64).
pub fn kernel_version() -> (u32, u32) {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release.trim().split(['.', '-']);
    let mut next = || parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (next(), next())
}

/// For a test of something this kernel may lack (a hook, a link type):
/// true when `present`. When absent, the test is skipped: said on stderr
/// and appended to the file named by $BPFTOOLS_TEST_SKIPS (cargo xtask
/// vmtest lists them per kernel), and false is returned for the test to
/// return. Absent from a kernel at or after `since`, the version that
/// brought it, is a failure instead: a test never skips where it should run
/// (None: a feature of the kernel's configuration, such as kprobes).
pub fn feature_present(present: bool, feature: &str, since: Option<(u32, u32)>) -> bool {
    if present {
        return true;
    }
    let running = kernel_version();
    let version = |(major, minor): (u32, u32)| format!("{major}.{minor}");
    if let Some(since) = since {
        assert!(
            running < since,
            "{feature} is missing on Linux {}, which should have it (since {})",
            version(running),
            version(since)
        );
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    let line = format!(
        "SKIPPED {test}: {feature} not offered by Linux {}{}",
        version(running),
        since.map_or(String::new(), |s| format!(" (since {})", version(s)))
    );
    eprintln!("{line}");
    if let Some(path) = std::env::var_os("BPFTOOLS_TEST_SKIPS") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
        {
            let _ = writeln!(f, "{line}");
        }
    }
    false
}

/// Where a test puts its files: those that must sit on a real block device
/// and in the page cache (biolatency's disk, cachestat's reads), and those
/// whose names are not unique across machines (programs it builds, files
/// named by pid). `tmp_dir` (the crate's CARGO_TARGET_TMPDIR), or
/// BPFTOOLS_TEST_SCRATCH in `cargo xtask vmtest`'s guests: a disk of the
/// guest's own (they see the build directory over 9p, side by side).
pub fn scratch_dir(tmp_dir: &str) -> std::path::PathBuf {
    std::env::var_os("BPFTOOLS_TEST_SCRATCH")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| tmp_dir.into())
}

/// A name no other test run uses, for programs and files the tools must find.
pub fn unique(prefix: &str) -> String {
    // The clock alone repeats between threads where it is coarse (a VM).
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{prefix}{}x{n}x{nanos:x}", std::process::id())
}

/// A running tool.
pub struct Traced {
    child: Child,
    lines: Receiver<String>,
    stdout: Vec<String>,
    stderr: Arc<Mutex<String>>,
}

/// What a tool printed, once it has ended.
#[derive(Debug)]
pub struct Finished {
    pub stdout: Vec<String>,
    pub stderr: String,
    pub status: ExitStatus,
}

impl Finished {
    /// Every stdout line parsed as JSON; panics on a line that is not.
    pub fn json(&self) -> Vec<serde_json::Value> {
        self.stdout
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }
}

impl Traced {
    /// Starts `bin args…` and waits until it has attached: its first stdout
    /// line (the header), or its "Tracing…" (memleak: "Attaching to…",
    /// profile: "Sampling at…") note on stderr in JSON mode.
    pub fn start(bin: &str, args: &[&str]) -> Traced {
        Self::start_command(Command::new(bin).args(args))
    }

    pub fn start_command(cmd: &mut Command) -> Traced {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning the tool");
        let (tx, lines) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        let pipe = child.stderr.take().unwrap();
        thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                let mut s = sink.lock().unwrap();
                s.push_str(&line);
                s.push('\n');
            }
        });
        let mut traced = Traced {
            child,
            lines,
            stdout: Vec::new(),
            stderr,
        };
        traced.wait_ready();
        traced
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let attached = {
                let stderr = self.stderr.lock().unwrap();
                [
                    "Tracing",
                    "Attaching to",
                    "Sampling",
                    "Counting",
                    "Running for",
                ]
                .iter()
                .any(|note| stderr.contains(note))
            };
            if attached {
                return;
            }
            match self.lines.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    self.stdout.push(line);
                    return;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().unwrap();
                    panic!(
                        "the tool exited ({status}) before it was ready; stderr:\n{}",
                        self.stderr.lock().unwrap()
                    );
                }
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "the tool was not ready after 60 s; stderr:\n{}",
                    self.stderr.lock().unwrap()
                );
            }
        }
    }

    /// bpftrace running `program`, whose BEGIN prints a line `Tracing`:
    /// returned once that line is out (its probes are attached by then).
    pub fn bpftrace(program: &str) -> Traced {
        let mut t = Traced::start_command(Command::new("bpftrace").args(["-e", program]));
        let deadline = Instant::now() + Duration::from_secs(60);
        while !t.stdout.iter().any(|l| l == "Tracing") {
            match t.lines.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => t.stdout.push(line),
                Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                Err(e) => panic!("bpftrace not tracing ({e:?}): {}", t.stderr.lock().unwrap()),
            }
        }
        t
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits up to `timeout` for `text` in what the tool has printed on
    /// stderr (a -v note); true once it is there.
    pub fn wait_stderr(&self, text: &str, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while !self.stderr.lock().unwrap().contains(text) {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    /// Sends SIGINT, as Ctrl-C would, and collects everything printed.
    pub fn stop(self) -> Finished {
        self.signal(libc::SIGINT)
    }

    /// Sends `sig` and collects everything printed once the tool has ended.
    pub fn signal(self, sig: libc::c_int) -> Finished {
        // SAFETY: kill with a child pid we own and a valid signal.
        unsafe { libc::kill(self.child.id() as i32, sig) };
        self.wait(Duration::from_secs(20))
    }

    /// Waits for the tool to end by itself (a duration, a count).
    pub fn wait(mut self, timeout: Duration) -> Finished {
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "the tool did not exit within {timeout:?}; stderr:\n{}",
                    self.stderr.lock().unwrap()
                );
            }
            thread::sleep(Duration::from_millis(20));
        };
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.stdout.push(line);
        }
        // Let the stderr reader reach EOF.
        thread::sleep(Duration::from_millis(50));
        let stderr = self.stderr.lock().unwrap().clone();
        Finished {
            stdout: std::mem::take(&mut self.stdout),
            stderr,
            status,
        }
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Ids of the BPF programs loaded right now, system-wide.
pub fn loaded_program_ids() -> Vec<u32> {
    libbpf_rs::query::ProgInfoIter::default()
        .map(|info| info.id)
        .collect()
}

/// Of `held`, the programs still loaded once the kernel has had time to
/// free them: a detached program runs no more, but is freed after an RCU
/// grace period, from a work queue (raw tracepoints do not wait for one
/// when detached, as classic ones do).
pub fn still_loaded(held: &[u32]) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let loaded = loaded_program_ids();
        let left: Vec<u32> = held
            .iter()
            .copied()
            .filter(|id| loaded.contains(id))
            .collect();
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Ids of the BPF programs a process holds open, from /proc/PID/fdinfo.
pub fn program_ids_of(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fdinfo")) else {
        return Vec::new();
    };
    dir.filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .filter_map(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("prog_id:"))
                .and_then(|id| id.trim().parse().ok())
        })
        .collect()
}

/// The BPF maps process `pid` holds: each one's name and size (entries).
pub fn maps_of(pid: u32) -> Vec<(String, u32)> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fdinfo")) else {
        return Vec::new();
    };
    let ids: Vec<u32> = dir
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .filter_map(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("map_id:"))
                .and_then(|id| id.trim().parse().ok())
        })
        .collect();
    libbpf_rs::query::MapInfoIter::default()
        .filter(|m| ids.contains(&m.id))
        .map(|m| (m.name.to_string_lossy().into_owned(), m.max_entries))
        .collect()
}

/// Starts `bin args…` as root with the features in `disable` turned off
/// (BPFTOOLS_DISABLE: `tp_btf,task_pt_regs`; empty for none), to run a
/// fallback variant on a kernel that has the preferred one.
pub fn start_disabled(bin: &str, args: &[&str], disable: &str) -> Traced {
    require_root();
    Traced::start_command(
        Command::new(bin)
            .args(args)
            .env("BPFTOOLS_DISABLE", disable),
    )
}

/// Waits `settle` for the last events to reach the tool, stops it as
/// [`stop_and_check_unloaded`] does, and checks that it exited 0.
pub fn settle_and_stop(traced: Traced, settle: Duration) -> Finished {
    thread::sleep(settle);
    let finished = stop_and_check_unloaded(traced);
    assert!(finished.status.success(), "{finished:?}");
    finished
}

/// Stops a tool with SIGINT and checks that every BPF program it had
/// loaded is gone afterwards; returns what it printed.
pub fn stop_and_check_unloaded(traced: Traced) -> Finished {
    let held = program_ids_of(traced.pid());
    assert!(!held.is_empty(), "the running tool holds no BPF program");
    let finished = traced.stop();
    let left = still_loaded(&held);
    assert!(
        left.is_empty(),
        "programs {left:?} are still loaded after exit"
    );
    finished
}

/// Copies /bin/true to a fresh directory under a unique short name (a comm
/// is 15 bytes), returning its path: a program only this test runs.
pub fn unique_program(prefix: &str) -> std::path::PathBuf {
    unique_copy(prefix, "/bin/true")
}

/// Copies the program at `source` as [`unique_program`] does.
pub fn unique_copy(prefix: &str, source: &str) -> std::path::PathBuf {
    let name = unique(prefix);
    let name = &name[..name.len().min(15)];
    let dir = std::env::temp_dir().join(format!("bpftools-test-{name}"));
    copy_executable(&dir, name, source)
}

/// Copies the program at `source` under exactly `name` (at most 15 bytes:
/// its comm), in a fresh directory of its own.
pub fn unique_copy_named(name: &str, source: &str) -> std::path::PathBuf {
    assert!(name.len() <= 15, "a comm holds 15 bytes");
    let dir = std::env::temp_dir().join(unique("bpftools-test-named"));
    copy_executable(&dir, name, source)
}

/// The directories the copies went to, removed when the test binary exits
/// (a tool under test may still look a program up by path until then).
static COPIES: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

extern "C" fn remove_copies() {
    if let Ok(dirs) = COPIES.lock() {
        for d in dirs.iter() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// `source` copied to `dir/name`, both readable and runnable by anyone.
fn copy_executable(dir: &std::path::Path, name: &str, source: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    {
        let mut dirs = COPIES.lock().unwrap();
        if dirs.is_empty() {
            // SAFETY: registers a plain function with no arguments, which
            // libc's exit calls once, after the test harness has returned.
            unsafe { libc::atexit(remove_copies) };
        }
        dirs.push(dir.to_path_buf());
    }
    std::fs::create_dir_all(dir).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.join(name);
    std::fs::copy(source, &path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Runs `tool | head -n 1` and returns how long the pipeline took to end;
/// fails unless the tool itself ended with status 0 (a closed stdout ends
/// a tool quietly).
pub fn time_piped_into_head(bin: &str, args: &[&str]) -> Duration {
    let start = Instant::now();
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg("\"$0\" \"$@\" | head -n 1 >/dev/null; exit ${PIPESTATUS[0]}")
        .arg(bin)
        .args(args)
        .stdout(Stdio::null())
        // Its own process group, so a tool that never ends can be killed too.
        .process_group(0);
    let mut child = cmd.spawn().expect("spawning sh");
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert_eq!(
                status.code(),
                Some(0),
                "`{bin} {args:?} | head -n 1`: the tool ended with {status}"
            );
            return start.elapsed();
        }
        if start.elapsed() > Duration::from_secs(30) {
            // SAFETY: kill with the negated pid of the group we created.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!("`{bin} | head -n 1` did not end within 30 s");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// For a tool that needs a hook some kernels lack (fentry or kprobes):
/// what `bin args… --dry-run` prints under `env`, or None where the tool
/// refuses to run here, the test then skipped and said
/// ([`feature_present`], `needs` naming the hook).
pub fn dry_run_where_it_runs(
    bin: &str,
    args: &[&str],
    env: &[(&str, &str)],
    needs: &str,
) -> Option<String> {
    require_root();
    let mut args = args.to_vec();
    args.push("--dry-run");
    let f = run_with_env(bin, &args, env);
    feature_present(f.status.success(), needs, None).then(|| f.stdout.join("\n"))
}

/// A tool run where its hooks are missing (`env` turning them off): it
/// exits 1 before printing anything, with one line on stderr naming each
/// of `words`.
pub fn assert_refused_in_one_line(bin: &str, args: &[&str], env: &[(&str, &str)], words: &[&str]) {
    require_root();
    let f = run_with_env(bin, args, env);
    assert_eq!(f.status.code(), Some(1), "{args:?}: {f:?}");
    let lines: Vec<&str> = f.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: {f:?}");
    for word in words {
        assert!(lines[0].contains(word), "{args:?}: {word}: {}", lines[0]);
    }
    assert!(f.stdout.is_empty(), "{args:?}: {f:?}");
}

/// Runs a tool to completion with a timeout (usage errors, --dry-run).
pub fn run(bin: &str, args: &[&str]) -> Finished {
    run_with_env(bin, args, &[])
}

/// Spawns `cmd` with its stdout piped and waits for its first line,
/// `ready`: a workload that says so once it is set up (its own start, an
/// interpreter's, does what the tools would see too), so that a test
/// starts its tools or its clock after that. Panics where the line is
/// another.
pub fn spawn_ready(cmd: &mut Command) -> std::process::Child {
    use std::io::BufRead;
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready", "{cmd:?}");
    child
}

/// `run`, with these variables set in the tool's environment.
pub fn run_with_env(bin: &str, args: &[&str], env: &[(&str, &str)]) -> Finished {
    let out = Command::new(bin)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("running the tool");
    Finished {
        stdout: String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(String::from)
            .collect(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status,
    }
}

/// Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
/// /sys/fs/cgroup/unified on hybrid systems).
pub fn cgroup2_root() -> std::path::PathBuf {
    testbed::cgroup2_root().expect("a cgroup v2 hierarchy is mounted")
}

/// Builds a test's small C program (`tests/<name>.c` of the calling crate)
/// with frame pointers and debug information, once per test binary run;
/// returns the executable's path.
pub fn build_c_program(manifest_dir: &str, tmp_dir: &str, name: &str) -> std::path::PathBuf {
    build_c_program_with(
        manifest_dir,
        tmp_dir,
        name,
        name,
        &["-O1", "-g", "-fno-omit-frame-pointer"],
    )
}

/// [`build_c_program`] with these compiler flags, into `out_name` in the
/// scratch directory (a VM guest's own: guests side by side share the
/// build directory). Built once per test binary run, and put in place by a
/// rename: a test running the program never sees it half written.
pub fn build_c_program_with(
    manifest_dir: &str,
    tmp_dir: &str,
    name: &str,
    out_name: &str,
    flags: &[&str],
) -> std::path::PathBuf {
    static BUILT: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    let src = std::path::Path::new(manifest_dir).join(format!("tests/{name}.c"));
    let out = scratch_dir(tmp_dir).join(out_name);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if !built.contains(&out) {
        let partial = scratch_dir(tmp_dir).join(unique(out_name));
        testbed::compile_c(&src, &partial, flags).unwrap_or_else(|e| panic!("{e:#}"));
        std::fs::rename(&partial, &out).unwrap();
        built.push(out.clone());
    }
    out
}

/// A test's target program, started and past its `ready` line; killed when
/// dropped.
pub struct ReadyProcess(Child);

impl ReadyProcess {
    pub fn start(program: &std::path::Path, args: &[&str]) -> ReadyProcess {
        let mut child = Command::new(program)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", program.display()));
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "{} did not start", program.display());
        ReadyProcess(child)
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for ReadyProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A program run as a container runs it: in mount and pid namespaces of
/// its own (`unshare`), from a copy in a private directory bind-mounted at
/// a path that exists only inside (`/mnt/bpftools-ns/NAME` on a tmpfs of
/// its own), so that no tool can read it by the path its maps show. It is
/// the namespace's first process (pid 1 there). Killed when dropped.
pub struct Namespaced {
    unshare: Child,
    /// Its pid as the host sees it.
    pub pid: u32,
    /// Its path inside, which does not exist outside.
    pub inside: String,
    dir: std::path::PathBuf,
}

impl Namespaced {
    /// Starts `program` (which prints `ready` when it has started) with `args`.
    pub fn start(program: &std::path::Path, args: &[&str]) -> Namespaced {
        let name = program.file_name().unwrap().to_str().unwrap().to_string();
        let dir = scratch_dir(&std::env::temp_dir().to_string_lossy()).join(unique("ns-"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(program, dir.join(&name)).unwrap();
        let inside = format!("/mnt/bpftools-ns/{name}");
        let script = "mount -t tmpfs bpftools-ns /mnt && mkdir /mnt/bpftools-ns && \
                      mount --bind \"$0\" /mnt/bpftools-ns && p=\"$1\" && shift && \
                      exec \"$p\" \"$@\"";
        let mut unshare = Command::new("unshare")
            .args([
                "--mount",
                "--pid",
                "--fork",
                "--kill-child",
                "--propagation",
                "private",
            ])
            .args(["sh", "-c", script])
            .arg(&dir)
            .arg(&inside)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("unshare (util-linux)");
        let mut line = String::new();
        BufReader::new(unshare.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(
            line.trim(),
            "ready",
            "{inside} did not start in its namespaces"
        );
        let children = format!("/proc/{0}/task/{0}/children", unshare.id());
        let pid = std::fs::read_to_string(&children)
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .expect("unshare's child");
        assert!(
            !std::path::Path::new(&inside).exists(),
            "{inside} is seen outside its mount namespace"
        );
        Namespaced {
            unshare,
            pid,
            inside,
            dir,
        }
    }
}

impl Namespaced {
    /// Writes `line` to the program's standard input.
    pub fn send_line(&mut self, line: &str) {
        use std::io::Write;
        let stdin = self.unshare.stdin.as_mut().expect("a piped stdin");
        writeln!(stdin, "{line}").expect("writing to the namespaced program");
    }

    /// Waits for the program (and so its namespace) to end.
    pub fn wait(&mut self) -> ExitStatus {
        self.unshare.wait().expect("waiting for unshare")
    }
}

impl Drop for Namespaced {
    fn drop(&mut self) {
        let _ = self.unshare.kill();
        let _ = self.unshare.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The contract tests for one tool: `contract_tests!(Spec { … })`. Each
/// check of [`contract`] becomes a test `contract::<check>`, and so does
/// [`outfiles`]' check.
#[macro_export]
macro_rules! contract_tests {
    ($spec:expr) => {
        const SPEC: $crate::contract::Spec = $spec;
        $crate::contract_tests!(@each
            dry_run_prints_hooks,
            bad_arguments_exit_2_with_one_line,
            piped_into_head_ends_at_once,
            unprivileged_user_is_told_what_is_needed,
            stop_signals_end_it_cleanly,
            json_lines_parse,
            help_has_examples,
            conflicting_options_exit_2_naming_both,
            hostile_input_never_crashes
        );
    };
    (@each $($check:ident),*) => {
        mod contract {
            $(
                #[test]
                fn $check() {
                    let _turn = $crate::contract::turn(&super::SPEC);
                    $crate::contract::$check(&super::SPEC);
                }
            )*

            #[test]
            fn output_files_keep_what_they_name() {
                let _turn = $crate::contract::turn(&super::SPEC);
                $crate::outfiles::output_files_keep_what_they_name(&super::SPEC);
            }
        }
    };
}

/// A cgroup named as a container runtime names its containers, made below
/// a slice of the test's own under the cgroup v2 root and removed on drop:
/// Docker's `docker-<id>.scope`, or a Kubernetes pod's
/// `kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope`. No runtime
/// is needed: the tools name containers from the path.
pub struct FakeContainer {
    /// The container's cgroup directory.
    pub dir: std::path::PathBuf,
    /// Its 64 hex digits; tools show the first 12 (empty for a unit).
    pub id: String,
    /// The pod's UID (Kubernetes only).
    pub pod: Option<String>,
    /// The systemd unit's name (`…service`; [`FakeContainer::unit`] only).
    pub unit: Option<String>,
    top: std::path::PathBuf,
}

impl FakeContainer {
    /// 64 hex digits: this process's count of them and the clock's low
    /// bits first (the short id), so that two containers of one test never
    /// share a short id and two test binaries hardly ever; then the pid.
    fn id() -> String {
        static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        let pid = std::process::id();
        format!("{n:04x}{:08x}{pid:08x}{nanos:016x}{:028x}", nanos as u32, 0)
    }

    fn make(top: std::path::PathBuf, below: &str, id: String, pod: Option<String>) -> Self {
        let dir = top.join(below);
        std::fs::create_dir_all(&dir).expect("making a cgroup (cgroup v2, as root)");
        FakeContainer {
            dir,
            id,
            pod,
            unit: None,
            top,
        }
    }

    /// `…/<unique>.slice/docker-<id>.scope`.
    pub fn docker() -> Self {
        let top = cgroup2_root().join(format!("{}.slice", unique("bpftools-test-")));
        let id = Self::id();
        Self::make(top, &format!("docker-{id}.scope"), id, None)
    }

    /// `…/<unique>.slice/kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope`.
    pub fn kubernetes() -> Self {
        let top = cgroup2_root().join(format!("{}.slice", unique("bpftools-test-")));
        let id = Self::id();
        let uid = format!(
            "{}-{}-{}-{}-{}",
            &id[..8],
            &id[8..12],
            &id[12..16],
            &id[16..20],
            &id[20..32]
        );
        let below = format!(
            "kubepods-burstable-pod{}.slice/cri-containerd-{id}.scope",
            uid.replace('-', "_")
        );
        Self::make(top, &below, id, Some(uid))
    }

    /// A systemd unit's cgroup, `…/<unique>.slice/<name>-<unique>.service`.
    pub fn unit(name: &str) -> Self {
        let top = cgroup2_root().join(format!("{}.slice", unique("bpftools-test-")));
        let unit = format!("{}.service", unique(&format!("{name}-")));
        let mut made = Self::make(top, &unit, String::new(), None);
        made.unit = Some(unit);
        made
    }

    /// The id as `docker ps` shows it (a container's, not a unit's).
    pub fn short_id(&self) -> &str {
        &self.id[..12]
    }

    /// Makes `cmd` start inside this cgroup (it moves itself in between
    /// fork and exec).
    pub fn adopt<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        use std::os::unix::ffi::OsStrExt;
        let procs = std::ffi::CString::new(self.dir.join("cgroup.procs").as_os_str().as_bytes())
            .expect("a cgroup path without NUL");
        // SAFETY: open, write and close are async-signal-safe, and the
        // path was made before the fork; "0" moves the writing process.
        unsafe {
            cmd.pre_exec(move || {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let wrote = libc::write(fd, b"0".as_ptr().cast(), 1);
                libc::close(fd);
                if wrote != 1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        }
    }

    /// Runs `sh -c script ARGS…` inside this cgroup (the shell moves
    /// itself in first) and waits for it.
    pub fn run(&self, script: &str, args: &[&str]) -> ExitStatus {
        Command::new("sh")
            .arg("-c")
            .arg(format!("echo $$ > \"$0/cgroup.procs\" && {script}"))
            .arg(&self.dir)
            .args(args)
            .status()
            .expect("running sh")
    }
}

impl Drop for FakeContainer {
    fn drop(&mut self) {
        // Deepest first; a process just ended may hold a cgroup a moment.
        let mut dirs: Vec<_> = self
            .dir
            .ancestors()
            .take_while(|d| d.starts_with(&self.top))
            .map(|d| d.to_path_buf())
            .collect();
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        for d in dirs {
            for _ in 0..50 {
                if std::fs::remove_dir(&d).is_ok() || !d.exists() {
                    break;
                }
                thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// Processes that spin on one CPU (pinned with taskset) until dropped: a
/// run queue crowded with `n` tasks. `adopt` may place each in a cgroup
/// before it starts ([`FakeContainer::adopt`]).
pub struct Spinners(Vec<Child>);

impl Spinners {
    pub fn on_cpu(cpu: u32, n: usize, adopt: impl Fn(&mut Command)) -> Spinners {
        Spinners(
            (0..n)
                .map(|_| {
                    let mut cmd = Command::new("taskset");
                    cmd.args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"]);
                    adopt(&mut cmd);
                    cmd.spawn().expect("taskset (util-linux)")
                })
                .collect(),
        )
    }

    pub fn pids(&self) -> Vec<u32> {
        self.0.iter().map(Child::id).collect()
    }

    /// The pids comma-separated, as `-p` takes them.
    pub fn list(&self) -> String {
        let pids: Vec<String> = self.pids().iter().map(u32::to_string).collect();
        pids.join(",")
    }
}

impl Drop for Spinners {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A test's program that works in rounds: it prints "ready", then makes
/// one round of its calls for each "go" line on its stdin and prints
/// "done"; it ends when its stdin closes (on drop).
pub struct Rounds {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    out: BufReader<std::process::ChildStdout>,
}

impl Rounds {
    /// Starts `program` and waits for its "ready".
    pub fn start(program: &std::path::Path, args: &[String]) -> Rounds {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
        let stdin = child.stdin.take();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready", "{}", program.display());
        Rounds { child, stdin, out }
    }

    pub fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// Makes one round of calls; returns how long it took, as the
    /// program's parent saw it.
    pub fn round(&mut self) -> Duration {
        use std::io::Write;
        let t = Instant::now();
        self.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "done");
        t.elapsed()
    }
}

impl Drop for Rounds {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The probe tools on a kernel without kprobes: a kernel function is an
/// error that says so (exit 1). True if this kernel has none and that was
/// checked (with `args`); false where kprobes exist, for the caller to test
/// them.
pub fn refuses_kernel_functions_without_kprobes(bin: &str, args: &[&str]) -> bool {
    require_root();
    if std::path::Path::new("/sys/bus/event_source/devices/kprobe/type").exists() {
        return false;
    }
    let f = run(bin, args);
    assert_eq!(f.status.code(), Some(1), "{f:?}");
    assert!(f.stderr.contains("kprobes"), "{f:?}");
    true
}
