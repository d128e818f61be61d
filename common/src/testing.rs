//! Helpers for the tools' integration tests: run the real binary, wait until
//! it is attached, stop it like a user would, and read what it printed.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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

/// Where a test puts files that must sit on a real block device and in the
/// page cache (biolatency's disk, cachestat's reads): `tmp_dir` (the
/// crate's CARGO_TARGET_TMPDIR), or BPFTOOLS_TEST_SCRATCH where the build
/// directory has neither (`cargo xtask vmtest`'s guests see it over 9p).
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
    /// line (the header), or its "Tracing…" (memleak: "Attaching to…") note
    /// on stderr in JSON mode.
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
                stderr.contains("Tracing") || stderr.contains("Attaching to")
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

    pub fn pid(&self) -> u32 {
        self.child.id()
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
    use std::os::unix::fs::PermissionsExt;
    let name = unique(prefix);
    let name = &name[..name.len().min(15)];
    let dir = std::env::temp_dir().join(format!("bpftools-test-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.join(name);
    std::fs::copy("/bin/true", &path).unwrap();
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

/// Runs a tool to completion with a timeout (usage errors, --dry-run).
pub fn run(bin: &str, args: &[&str]) -> Finished {
    run_with_env(bin, args, &[])
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
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    mounts
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"cgroup2")).then(|| std::path::PathBuf::from(f[1]))
        })
        .expect("a cgroup v2 hierarchy is mounted")
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

/// [`build_c_program`] with these compiler flags, into `tmp_dir/out_name`.
pub fn build_c_program_with(
    manifest_dir: &str,
    tmp_dir: &str,
    name: &str,
    out_name: &str,
    flags: &[&str],
) -> std::path::PathBuf {
    let src = std::path::Path::new(manifest_dir).join(format!("tests/{name}.c"));
    let out = std::path::Path::new(tmp_dir).join(out_name);
    let status = Command::new("cc")
        .args(flags)
        .args(["-pthread", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("running cc");
    assert!(status.success(), "cc failed to build {}", src.display());
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

/// The checks every tool passes, run for real as root: each tool's
/// `tests/contract.rs` is one [`contract_tests!`](crate::contract_tests) call.
pub mod contract {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::{program_ids_of, require_root, run, still_loaded, Traced};

    /// How a tool is run for the contract: the arguments it traces with,
    /// and what its final report (after a stop signal) contains.
    pub struct Spec {
        pub bin: &'static str,
        /// Arguments for a run that attaches and prints a line at once.
        pub args: &'static [&'static str],
        /// Text the final report prints after SIGINT/SIGTERM/SIGHUP, where
        /// the tool has one whose content is certain on any machine.
        pub final_report: Option<&'static str>,
    }

    pub fn dry_run_prints_hooks(spec: &Spec) {
        require_root();
        let mut args = spec.args.to_vec();
        args.push("--dry-run");
        let f = run(spec.bin, &args);
        assert!(f.status.success(), "{f:?}");
        assert!(
            f.stdout.first().is_some_and(|l| l.contains("dry run")),
            "{f:?}"
        );
        assert!(
            f.stdout.iter().skip(1).any(|l| l.starts_with("  ")),
            "no hook listed: {f:?}"
        );
    }

    pub fn bad_arguments_exit_2_with_one_line(spec: &Spec) {
        require_root();
        for bad in [
            &["--no-such-flag"][..],
            &["--json", "--json"],
            &["-p", "notapid"],
            &["-p", "999999999"],
        ] {
            let f = run(spec.bin, bad);
            assert_eq!(f.status.code(), Some(2), "{bad:?}: {f:?}");
            let lines: Vec<&str> = f.stderr.lines().collect();
            assert_eq!(lines.len(), 1, "{bad:?}: not one line: {}", f.stderr);
            assert!(lines[0].contains("error"), "{bad:?}: {}", f.stderr);
            assert!(f.stdout.is_empty(), "{bad:?}: {f:?}");
        }
    }

    /// `tool | head -n 1` ends, quietly and with status 0, whether the
    /// tool traces or only prints its dry run.
    pub fn piped_into_head_ends_at_once(spec: &Spec) {
        require_root();
        let took = super::time_piped_into_head(spec.bin, spec.args);
        // Not a timing assertion: the helper fails the test at 30 s; this
        // only reports how long it took.
        eprintln!("`{} | head -n 1` ended in {took:?}", spec.bin);
        let mut args = spec.args.to_vec();
        args.push("--dry-run");
        super::time_piped_into_head(spec.bin, &args);
    }

    /// Without root or the capabilities, the tool says what it needs
    /// (rather than blaming the kernel) and exits 1.
    pub fn unprivileged_user_is_told_what_is_needed(spec: &Spec) {
        require_root();
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(spec.bin)
            .args(spec.args)
            .stdin(Stdio::null())
            .output()
            .expect("running setpriv");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("needs root, or CAP_BPF and CAP_PERFMON"),
            "{stderr}"
        );
    }

    /// SIGINT, SIGTERM and SIGHUP each end the tool with status 0, its
    /// final report, and every program it held unloaded.
    pub fn stop_signals_end_it_cleanly(spec: &Spec) {
        require_root();
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            let tool = Traced::start(spec.bin, spec.args);
            let held = program_ids_of(tool.pid());
            assert!(!held.is_empty(), "the running tool holds no BPF program");
            std::thread::sleep(Duration::from_millis(300));
            let f = tool.signal(sig);
            assert_eq!(f.status.code(), Some(0), "signal {sig}: {f:?}");
            let left = still_loaded(&held);
            assert!(
                left.is_empty(),
                "signal {sig}: programs {left:?} still loaded"
            );
            if let Some(text) = spec.final_report {
                assert!(
                    f.stdout.iter().any(|l| l.contains(text)),
                    "signal {sig}: no final report ({text:?}): {f:?}"
                );
            }
        }
    }

    /// Every stdout line of `--json` is a JSON object, while the machine
    /// does a little of everything (execs, opens, sleeps).
    pub fn json_lines_parse(spec: &Spec) {
        require_root();
        let mut args = spec.args.to_vec();
        args.push("--json");
        let tool = Traced::start(spec.bin, &args);
        let dir = std::env::temp_dir();
        for _ in 0..20 {
            let _ = Command::new("true").status();
            let _ = std::fs::read_dir(&dir);
            std::thread::sleep(Duration::from_millis(20));
        }
        let f = tool.stop();
        assert!(f.status.success(), "{f:?}");
        for v in f.json() {
            assert!(v.is_object(), "{v}");
        }
    }

    pub fn help_has_examples(spec: &Spec) {
        let f = run(spec.bin, &["-h"]);
        assert!(f.status.success(), "{f:?}");
        assert!(f.stdout.iter().any(|l| l == "EXAMPLES:"), "{f:?}");
        let f = run(spec.bin, &["--version"]);
        assert!(f.status.success(), "{f:?}");
    }

    /// Values a careless or hostile user may give any option.
    const HOSTILE: &[&str] = &[
        "",
        "-1",
        "0",
        "18446744073709551615",
        "4294967295",
        "999999999",
        "/nonexistent/x",
        "(",
        "\u{202e}x",
        "a\nb",
    ];

    /// The options `-h` lists that take a value (`-p, --pid <PID>`).
    fn value_options(bin: &str) -> Vec<String> {
        let f = run(bin, &["-h"]);
        f.stdout
            .iter()
            .filter_map(|l| {
                let l = l.trim_start();
                let opt = l.split([',', ' ']).find(|w| w.starts_with("--"))?;
                l.contains(" <").then(|| opt.to_string())
            })
            .filter(|o| o != "--exec")
            .collect()
    }

    /// Runs `bin args…` with a deadline; the exit status code, or a panic
    /// naming the signal that killed it.
    fn exit_code(
        bin: &str,
        args: &[&str],
        cwd: &std::path::Path,
        stdout: Stdio,
        stderr: Stdio,
    ) -> i32 {
        let mut child = Command::new(bin)
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .expect("spawning the tool");
        let start = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                use std::os::unix::process::ExitStatusExt;
                if let Some(sig) = status.signal() {
                    panic!("{bin} {args:?} was killed by signal {sig}");
                }
                return status.code().unwrap();
            }
            if start.elapsed() > Duration::from_secs(5) {
                // Still tracing (the arguments were valid): stop it.
                // SAFETY: kill with our own child's pid.
                unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
                let status = child.wait().unwrap();
                use std::os::unix::process::ExitStatusExt;
                assert!(status.signal().is_none(), "{bin} {args:?}: {status}");
                return status.code().unwrap();
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Every option with every hostile value, the positionals with them,
    /// huge id lists, and a full or closed stdout and stderr: the tool
    /// exits 0, 1 or 2, never by a signal (a panic aborts), and leaves
    /// nothing loaded.
    pub fn hostile_input_never_crashes(spec: &Spec) {
        require_root();
        // Options naming output files (--svg, --hdr-log, --prom-file) create
        // them, relative names included: in a scratch directory, not here.
        let cwd = std::env::temp_dir().join(super::unique("hostile"));
        std::fs::create_dir_all(&cwd).unwrap();
        let many: String = (1..=1100)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let mut runs: Vec<Vec<String>> = Vec::new();
        for opt in value_options(spec.bin) {
            for v in HOSTILE.iter().copied().chain([many.as_str()]) {
                runs.push(vec![opt.clone(), v.to_string(), "--dry-run".into()]);
            }
        }
        for v in HOSTILE {
            runs.push(vec![v.to_string(), "--dry-run".into()]);
            runs.push(vec!["1".into(), v.to_string(), "--dry-run".into()]);
        }
        for args in &runs {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let code = exit_code(spec.bin, &args, &cwd, Stdio::null(), Stdio::piped());
            assert!(matches!(code, 0..=2), "{args:?}: exit status {code}");
        }
        let full = || {
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap()
        };
        for (out, err) in [(true, false), (false, true), (true, true)] {
            let mut args = spec.args.to_vec();
            args.push("--dry-run");
            let code = exit_code(
                spec.bin,
                &args,
                &cwd,
                if out { full().into() } else { Stdio::null() },
                if err { full().into() } else { Stdio::null() },
            );
            assert!(matches!(code, 0..=2), "/dev/full: exit status {code}");
            // A full stderr while tracing (notes, banners) is no crash either.
            let mut args = spec.args.to_vec();
            args.push("--json");
            let code = exit_code(
                spec.bin,
                &args,
                &cwd,
                if out { full().into() } else { Stdio::null() },
                if err { full().into() } else { Stdio::null() },
            );
            assert!(
                matches!(code, 0..=2),
                "/dev/full tracing: exit status {code}"
            );
        }
        let _ = std::fs::remove_dir_all(&cwd);
        // Every run above has exited and been reaped, and the tools pin
        // nothing, so none of their programs can stay loaded; the signal
        // test checks a live tool's programs go with it.
    }
}

/// The contract tests for one tool: `contract_tests!(Spec { … })`.
#[macro_export]
macro_rules! contract_tests {
    ($spec:expr) => {
        const SPEC: $crate::testing::contract::Spec = $spec;
        #[test]
        fn contract_dry_run_prints_hooks() {
            $crate::testing::contract::dry_run_prints_hooks(&SPEC);
        }
        #[test]
        fn contract_bad_arguments_exit_2_with_one_line() {
            $crate::testing::contract::bad_arguments_exit_2_with_one_line(&SPEC);
        }
        #[test]
        fn contract_piped_into_head_ends_at_once() {
            $crate::testing::contract::piped_into_head_ends_at_once(&SPEC);
        }
        #[test]
        fn contract_unprivileged_user_is_told_what_is_needed() {
            $crate::testing::contract::unprivileged_user_is_told_what_is_needed(&SPEC);
        }
        #[test]
        fn contract_stop_signals_end_it_cleanly() {
            $crate::testing::contract::stop_signals_end_it_cleanly(&SPEC);
        }
        #[test]
        fn contract_json_lines_parse() {
            $crate::testing::contract::json_lines_parse(&SPEC);
        }
        #[test]
        fn contract_help_has_examples() {
            $crate::testing::contract::help_has_examples(&SPEC);
        }
        #[test]
        fn contract_hostile_input_never_crashes() {
            $crate::testing::contract::hostile_input_never_crashes(&SPEC);
        }
    };
}

/// A tool's argument definitions are consistent (clap's debug assertions)
/// and reject each of `bad`: every tool's unit test of its options.
pub fn check_arguments<A: clap::Parser + clap::CommandFactory + std::fmt::Debug>(bad: &[&[&str]]) {
    A::command().debug_assert();
    for args in bad {
        assert!(A::try_parse_from(*args).is_err(), "{args:?} was accepted");
    }
}

/// A real Prometheus server (Debian's `prometheus`) scraping a tool, and
/// what the tests ask it.
pub mod prometheus {
    use std::io::{Read, Write};
    use std::path::PathBuf;
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use serde_json::Value;

    /// A free TCP port on 127.0.0.1.
    pub fn free_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    }

    /// GET http://127.0.0.1:`port``path`: the status line and the body.
    pub fn http_get(port: u16, path: &str) -> Option<(String, String)> {
        let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        let (head, body) = text.split_once("\r\n\r\n")?;
        Some((head.lines().next()?.to_string(), body.to_string()))
    }

    /// Scrapes the tool on `port` and lints the scrape with promtool.
    pub fn promtool_check(port: u16) {
        let (status, scrape) = http_get(port, "/metrics").expect("scraping the tool");
        assert!(status.contains("200"), "{status}");
        let mut promtool = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("promtool (package prometheus; cargo xtask test installs it)");
        promtool
            .stdin
            .take()
            .unwrap()
            .write_all(scrape.as_bytes())
            .unwrap();
        let lint = promtool.wait_with_output().unwrap();
        assert!(lint.status.success(), "promtool: {lint:?}\n{scrape}");
    }

    /// Two log2 slots apart at most: `a` and `b` (in the same unit) lie in
    /// the same or neighbouring log2 slots.
    pub fn assert_same_log2_slot(a: f64, b: f64) {
        assert!(
            (a.max(1.0).log2() - b.max(1.0).log2()).abs() <= 1.0,
            "{a} and {b} are more than one log2 slot apart"
        );
    }

    /// Prometheus, scraping one target every second; killed on drop.
    pub struct Prometheus {
        child: Child,
        port: u16,
        dir: PathBuf,
    }

    impl Prometheus {
        pub fn start(target: &str) -> Prometheus {
            let dir = std::env::temp_dir().join(super::unique("prometheus"));
            std::fs::create_dir_all(&dir).unwrap();
            let config = dir.join("prometheus.yml");
            std::fs::write(
                &config,
                format!(
                    "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: tool\n    \
                     static_configs:\n      - targets: ['{target}']\n"
                ),
            )
            .unwrap();
            let port = free_port();
            let child = Command::new("prometheus")
                .arg(format!("--config.file={}", config.display()))
                .arg(format!(
                    "--storage.tsdb.path={}",
                    dir.join("data").display()
                ))
                .arg(format!("--web.listen-address=127.0.0.1:{port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("prometheus (package prometheus; cargo xtask test installs it)");
            let deadline = Instant::now() + Duration::from_secs(30);
            while !http_get(port, "/-/ready").is_some_and(|(s, _)| s.contains("200")) {
                assert!(Instant::now() < deadline, "prometheus did not get ready");
                std::thread::sleep(Duration::from_millis(100));
            }
            let prometheus = Prometheus { child, port, dir };
            // Targets are handed to the scrapers some seconds after start:
            // wait for a first successful scrape.
            while prometheus.try_query("up") != Some(1.0) {
                assert!(
                    Instant::now() < deadline,
                    "prometheus never scraped {target}"
                );
                std::thread::sleep(Duration::from_millis(200));
            }
            prometheus
        }

        /// An instant PromQL query's single value.
        pub fn query(&self, query: &str) -> f64 {
            self.try_query(query)
                .unwrap_or_else(|| panic!("{query}: no value from prometheus"))
        }

        fn try_query(&self, query: &str) -> Option<f64> {
            let encoded: String = query
                .bytes()
                .map(|b| match b {
                    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'.' => {
                        (b as char).to_string()
                    }
                    _ => format!("%{b:02X}"),
                })
                .collect();
            let (_, body) = http_get(self.port, &format!("/api/v1/query?query={encoded}"))?;
            let v: Value = serde_json::from_str(&body).ok()?;
            v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
        }
    }

    impl Drop for Prometheus {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// `go tool pprof`, the reference reader of the profiles `--pprof` writes.
pub mod pprof {
    use std::path::Path;
    use std::process::Command;

    /// One row of `go tool pprof -top`: a function, its flat and cumulative
    /// values in the sample type's unit.
    #[derive(Debug)]
    pub struct Row {
        pub name: String,
        pub flat: u64,
        pub cum: u64,
    }

    /// `go tool pprof -top` of the profile at `path` for `sample_index`
    /// (empty: the default), values shown in `unit` (`ns`, `B`, or empty
    /// for counts); the header lines and the rows. Fails when pprof
    /// rejects the file.
    pub fn top(path: &Path, sample_index: &str, unit: &str) -> (String, Vec<Row>) {
        let mut cmd = Command::new("go");
        cmd.args(["tool", "pprof", "-top", "-nodecount=1000"]);
        if !sample_index.is_empty() {
            cmd.arg(format!("-sample_index={sample_index}"));
        }
        if !unit.is_empty() {
            cmd.arg(format!("-unit={unit}"));
        }
        // pprof keeps a cache of fetched profiles in $HOME/pprof.
        cmd.env("PPROF_TMPDIR", std::env::temp_dir());
        let out = cmd
            .arg(path)
            .output()
            .expect("go (package golang-go; cargo xtask test installs it)");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "go tool pprof: {}\n{text}",
            String::from_utf8_lossy(&out.stderr)
        );
        let value = |s: &str| {
            s.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .parse()
        };
        let mut header = String::new();
        let mut rows = Vec::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            match (f.len() >= 6, f.first().map(|v| value(v))) {
                (true, Some(Ok(flat))) => rows.push(Row {
                    flat,
                    cum: value(f[3]).unwrap_or_else(|_| panic!("cum in {line}")),
                    name: f[5..].join(" "),
                }),
                _ => {
                    header.push_str(line);
                    header.push('\n');
                }
            }
        }
        (header, rows)
    }

    /// The row of `function`, or a failure showing all of them.
    pub fn row<'a>(rows: &'a [Row], function: &str) -> &'a Row {
        rows.iter()
            .find(|r| r.name == function)
            .unwrap_or_else(|| panic!("no {function} in pprof's top: {rows:#?}"))
    }
}
