//! The checks every tool passes, run for real as root: each tool's
//! `tests/contract.rs` is one [`contract_tests!`](crate::contract_tests) call.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{program_ids_of, require_root, run, still_loaded, Traced};

/// How a tool is run for the contract: the arguments it traces with,
/// and what its final report (after a stop signal) contains.
pub struct Spec {
    pub bin: &'static str,
    /// Arguments for a run that attaches and prints a line at once.
    pub args: &'static [&'static str],
    /// Text the final report prints after SIGINT/SIGTERM/SIGHUP, where
    /// the tool has one whose content is certain on any machine.
    pub final_report: Option<&'static str>,
    /// What the tool needs of the kernel to attach at all, where some
    /// kernels lack it (fentry or kprobes, say), and whether this one
    /// has it: the checks that attach are skipped, and said, without it.
    pub needs: Option<Needs>,
    /// The tool traces what every process does at a high rate (memleak's
    /// kernel allocations): its checks run it once at a time, as runs side
    /// by side trace one another (four memleaks took over 20 s to end), and
    /// no other tool's check runs beside one of them ([`turn`]).
    pub heavy: bool,
    /// Option sets that cannot all hold, each with the names its usage
    /// error must show (clap names an option by its long form).
    pub conflicts: &'static [Conflict],
    /// The tool's own arguments that its parser must refuse (bad values,
    /// options that cannot hold together without a name to show).
    pub refused: &'static [&'static [&'static str]],
}

/// Arguments that cannot all hold, and the options the error must name.
pub type Conflict = (&'static [&'static str], &'static [&'static str]);

/// A kernel feature, named, and whether this kernel has it.
pub type Needs = (&'static str, fn() -> bool);

impl Spec {
    /// How many of its runs a check makes side by side.
    pub(crate) fn runs_at_once(&self) -> usize {
        if self.heavy {
            1
        } else {
            4
        }
    }

    /// True if the tool can attach here; else the skip is said.
    pub(crate) fn attaches(&self) -> bool {
        self.needs
            .is_none_or(|(what, present)| crate::feature_present(present(), what, None))
    }
}

/// A check's turn among the tools whose contracts run side by side
/// (`cargo xtask test` runs three tools' at once): a heavy tool's check
/// runs while no other tool's does, the others' side by side, since a
/// heavy tool traces what every process does and each slows the other
/// (memleak's kernel mode took over 20 s to end beside two other tools'
/// checks). A lock on a file every test binary opens, held until the
/// returned file is dropped.
pub fn turn(spec: &Spec) -> std::fs::File {
    use std::os::fd::AsRawFd;
    let path = std::env::temp_dir().join("bpftools-contract.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("opening {}: {e}", path.display()));
    let op = if spec.heavy {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    };
    loop {
        // SAFETY: the descriptor is open for the call.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return file;
        }
        let e = std::io::Error::last_os_error();
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::Interrupted,
            "locking {}: {e}",
            path.display()
        );
    }
}

pub fn dry_run_prints_hooks(spec: &Spec) {
    require_root();
    if !spec.attaches() {
        return;
    }
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

/// A name holding a right-to-left override, a C1 CSI and DEL: shown raw, a
/// terminal would act on them.
pub const HOSTILE_NAME: &str = "x\u{202e}y\u{9b}z\u{7f}";

/// True if `text` holds any of [`HOSTILE_NAME`]'s characters raw.
pub fn holds_raw_controls(text: &str) -> bool {
    text.contains(['\u{202e}', '\u{9b}', '\u{7f}', '\u{1b}'])
}

/// Each declared conflict exits 2 with one line naming its options.
pub fn conflicting_options_exit_2_naming_both(spec: &Spec) {
    require_root();
    for (args, names) in spec.conflicts {
        let f = run(spec.bin, args);
        assert_eq!(f.status.code(), Some(2), "{args:?}: {f:?}");
        let lines: Vec<&str> = f.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: not one line: {}", f.stderr);
        for name in *names {
            assert!(
                lines[0].contains(name),
                "{args:?}: {name} not named: {}",
                lines[0]
            );
        }
    }
}

pub fn bad_arguments_exit_2_with_one_line(spec: &Spec) {
    require_root();
    let shared: [&[&str]; 4] = [
        &["--no-such-flag"],
        &["--json", "--json"],
        &["-p", "notapid"],
        &["-p", "999999999"],
    ];
    for bad in shared.iter().chain(spec.refused) {
        let f = run(spec.bin, bad);
        assert_eq!(f.status.code(), Some(2), "{bad:?}: {f:?}");
        let lines: Vec<&str> = f.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{bad:?}: not one line: {}", f.stderr);
        assert!(lines[0].contains("error"), "{bad:?}: {}", f.stderr);
        assert!(f.stdout.is_empty(), "{bad:?}: {f:?}");
    }
    // What an error names is shown escaped: an unknown option, a bad
    // positional value (or an unexpected one).
    let option = format!("--no-such-{HOSTILE_NAME}");
    for bad in [&[option.as_str()][..], &[HOSTILE_NAME]] {
        let f = run(spec.bin, bad);
        assert_eq!(f.status.code(), Some(2), "{bad:?}: {f:?}");
        assert_eq!(f.stderr.lines().count(), 1, "{bad:?}: {}", f.stderr);
        assert!(
            !holds_raw_controls(&f.stderr),
            "{bad:?}: raw: {:?}",
            f.stderr
        );
        assert!(
            f.stderr.contains("x\\u{202e}y\\xc2\\x9bz\\x7f"),
            "{bad:?}: the value not shown escaped: {}",
            f.stderr
        );
    }
}

/// `tool | head -n 1` ends, quietly and with status 0, whether the
/// tool traces or only prints its dry run.
pub fn piped_into_head_ends_at_once(spec: &Spec) {
    require_root();
    if !spec.attaches() {
        return;
    }
    let took = super::time_piped_into_head(spec.bin, spec.args);
    // Not a timing assertion: the helper fails the test at 30 s; this
    // only reports how long it took.
    eprintln!("`{} | head -n 1` ended in {took:?}", spec.bin);
    let mut args = spec.args.to_vec();
    args.push("--dry-run");
    super::time_piped_into_head(spec.bin, &args);
}

/// Without root or the capabilities, the tool says which it lacks and
/// what it needs (rather than blaming the kernel), and exits 77.
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
    assert_eq!(out.status.code(), Some(77), "{stderr}");
    assert!(
        stderr.contains("lacks CAP_BPF and CAP_PERFMON: it needs root, or CAP_BPF and CAP_PERFMON"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
}

/// SIGINT, SIGTERM and SIGHUP each end the tool with status 0, its
/// final report, and every program it held unloaded.
pub fn stop_signals_end_it_cleanly(spec: &Spec) {
    require_root();
    if !spec.attaches() {
        return;
    }
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        let tool = Traced::start(spec.bin, spec.args);
        let held = program_ids_of(tool.pid());
        assert!(!held.is_empty(), "the running tool holds no BPF program");
        std::thread::sleep(Duration::from_millis(300));
        let f = tool.signal(sig);
        assert_eq!(f.status.code(), Some(0), "signal {sig}: {f:?}");
        // Each failure counter the kernel side kept is said by its name.
        assert!(!f.stderr.contains("of an unnamed kind"), "{f:?}");
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
    if !spec.attaches() {
        return;
    }
    let mut args = spec.args.to_vec();
    args.push("--json");
    let tool = Traced::start(spec.bin, &args);
    let dir = std::env::temp_dir();
    // A shell under a hostile name (its comm) that opens files and execs.
    let shell = crate::unique_copy_named(HOSTILE_NAME, "/bin/sh");
    for _ in 0..20 {
        let _ = Command::new("true").status();
        let _ = std::fs::read_dir(&dir);
        let _ = Command::new(&shell)
            .args(["-c", ": < /etc/hostname; /bin/true"])
            .status();
        std::thread::sleep(Duration::from_millis(20));
    }
    let f = tool.stop();
    assert!(f.status.success(), "{f:?}");
    for line in &f.stdout {
        assert!(
            !holds_raw_controls(line),
            "a raw control character: {line:?}"
        );
    }
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

/// Runs `bin args…` until it exits or `deadline` has passed (then it is
/// stopped with SIGINT); the exit status code, or a panic naming the signal
/// that killed it.
fn exit_code(
    bin: &str,
    args: &[&str],
    cwd: &std::path::Path,
    (stdout, stderr): (Stdio, Stdio),
    deadline: Duration,
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
        if start.elapsed() > deadline {
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
    // Dry runs, mostly refused at once: side by side, four at a time.
    let (bin, spec_args) = (spec.bin, spec.args);
    let jobs = runs
        .into_iter()
        .map(|args| {
            let cwd = cwd.clone();
            Box::new(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                let outputs = (Stdio::null(), Stdio::piped());
                let code = exit_code(bin, &args, &cwd, outputs, Duration::from_secs(5));
                assert!(matches!(code, 0..=2), "{args:?}: exit status {code}");
            }) as Box<dyn FnOnce() + Send>
        })
        .collect();
    super::in_parallel(spec.runs_at_once(), jobs);
    // A full stdout, stderr or both: while printing the dry run, and while
    // tracing (notes, banners: a second of tracing has written them).
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let outputs = move |out: bool, err: bool| -> (Stdio, Stdio) {
        (
            if out { full().into() } else { Stdio::null() },
            if err { full().into() } else { Stdio::null() },
        )
    };
    let mut jobs: Vec<Box<dyn FnOnce() + Send>> = Vec::new();
    for (out, err) in [(true, false), (false, true), (true, true)] {
        for (extra, deadline) in [
            ("--dry-run", Duration::from_secs(5)),
            ("--json", Duration::from_millis(1500)),
        ] {
            let cwd = cwd.clone();
            jobs.push(Box::new(move || {
                let mut args = spec_args.to_vec();
                args.push(extra);
                let code = exit_code(bin, &args, &cwd, outputs(out, err), deadline);
                assert!(
                    matches!(code, 0..=2),
                    "/dev/full ({extra}): exit status {code}"
                );
            }));
        }
    }
    super::in_parallel(spec.runs_at_once(), jobs);
    let _ = std::fs::remove_dir_all(&cwd);
    // Every run above has exited and been reaped, and the tools pin
    // nothing, so none of their programs can stay loaded; the signal
    // test checks a live tool's programs go with it.
}
