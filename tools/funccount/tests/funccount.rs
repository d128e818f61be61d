//! funccount against a program of known calls (fc-work.c): each round calls
//! work_a N times, work_b 2N, work_c 3N, fires its USDT probe N times,
//! makes N getppid() and N malloc(); counted exactly while the tool follows
//! it (-p).

use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, Finished, Rounds, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_funccount");
const N: u64 = 1000;

fn work_binary() -> &'static std::path::PathBuf {
    static BUILT: OnceLock<std::path::PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        testkit::build_c_program_with(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "fc-work",
            "fc-work",
            &["-O1", "-g", "-fno-omit-frame-pointer"],
        )
    })
}

fn work_path() -> String {
    work_binary().display().to_string()
}

/// The program, past "ready": a round of calls waits for `round()`.
fn start_work() -> Rounds {
    Rounds::start(work_binary(), &[N.to_string()])
}

/// Runs funccount with `args` (and --json) on a fresh program, for one
/// round; its rows by func.
fn counted(args: &[&str], env: &[(&str, &str)]) -> (Vec<Value>, Finished) {
    require_root();
    let mut work = start_work();
    let pid = work.pid();
    let mut cmd = Command::new(BIN);
    cmd.args(["--json", "-p", &pid])
        .args(args)
        .envs(env.iter().copied());
    let tool = Traced::start_command(&mut cmd);
    work.round();
    let f = testkit::settle_and_stop(tool, Duration::from_millis(200));
    assert!(f.status.success(), "{f:?}");
    (f.json(), f)
}

fn count(rows: &[Value], func: &str) -> Option<u64> {
    rows.iter()
        .find(|r| r["func"] == func)
        .map(|r| r["count"].as_u64().unwrap())
}

#[test]
fn funccount_counts_each_function_of_a_pattern_exactly() {
    let pattern = format!("{}:work_*", work_path());
    let (rows, f) = counted(&[&pattern], &[]);
    assert_eq!(count(&rows, "work_a"), Some(N), "{f:?}");
    assert_eq!(count(&rows, "work_b"), Some(2 * N), "{f:?}");
    assert_eq!(count(&rows, "work_c"), Some(3 * N), "{f:?}");
    assert_eq!(count(&rows, "other_work"), None, "{f:?}");
    assert_eq!(rows.len(), 3, "{f:?}");
}

/// Without attach cookies (5.10-5.14; forced here with BPFTOOLS_DISABLE):
/// a copy of the program per function and tracepoint, each counted
/// exactly, with the USDT probe and libc's malloc.
#[test]
fn funccount_counts_exactly_without_attach_cookies() {
    let env = [("BPFTOOLS_DISABLE", "attach_cookie")];
    let pattern = format!("{}:work_*", work_path());
    let usdt = format!("u:{}:fctest:tick", work_path());
    let (rows, f) = counted(
        &[&pattern, &usdt, "t:syscalls:sys_enter_getppid", "c:malloc"],
        &env,
    );
    assert_eq!(count(&rows, "work_a"), Some(N), "{f:?}");
    assert_eq!(count(&rows, "work_b"), Some(2 * N), "{f:?}");
    assert_eq!(count(&rows, "work_c"), Some(3 * N), "{f:?}");
    assert_eq!(count(&rows, "tick"), Some(N), "{f:?}");
    assert_eq!(count(&rows, "syscalls:sys_enter_getppid"), Some(N), "{f:?}");
    let malloc = count(&rows, "malloc").unwrap_or(0);
    assert!((N..N + 10).contains(&malloc), "{malloc} mallocs: {f:?}");
    let dry = testkit::run_with_env(BIN, &["--dry-run", &pattern], &env);
    assert!(
        dry.stdout
            .iter()
            .any(|l| l.contains("a copy of the program for each of the 3")),
        "{dry:?}"
    );
}

/// System call tracepoints are served by one program at each raw
/// sys_enter/sys_exit, the call's point looked up by its number (fstat's
/// and uname's tracepoints are named after their implementations): exact
/// counts, and the same from the classic tracepoints.
#[test]
fn funccount_counts_system_call_tracepoints_from_the_raw_ones() {
    let probes = [
        "t:syscalls:sys_*_newfstat",
        "t:syscalls:sys_enter_newuname",
        "t:syscalls:sys_exit_getppid",
    ];
    for (env, program) in [
        (vec![], "raw_tp sys_enter"),
        (
            vec![("BPFTOOLS_DISABLE", "raw_syscalls")],
            "tracepoint syscalls:",
        ),
    ] {
        let (rows, f) = counted(&probes, &env);
        for func in [
            "syscalls:sys_enter_newfstat",
            "syscalls:sys_exit_newfstat",
            "syscalls:sys_enter_newuname",
            "syscalls:sys_exit_getppid",
        ] {
            assert_eq!(count(&rows, func), Some(N), "{func} {env:?}: {f:?}");
        }
        assert_eq!(rows.len(), 4, "{env:?}: {f:?}");
        let dry = testkit::run_with_env(BIN, &["--dry-run", probes[0]], &env);
        assert!(
            dry.stdout.iter().any(|l| l.contains(program)),
            "{env:?}: {dry:?}"
        );
    }
}

#[test]
fn funccount_single_uprobes_count_the_same_where_uprobe_multi_is_off() {
    let pattern = format!("{}:work_*", work_path());
    let env = [("BPFTOOLS_DISABLE", "uprobe_multi")];
    let (rows, f) = counted(&[&pattern], &env);
    assert_eq!(count(&rows, "work_a"), Some(N), "{f:?}");
    assert_eq!(count(&rows, "work_c"), Some(3 * N), "{f:?}");
    let dry = testkit::run_with_env(BIN, &["--dry-run", &pattern], &env);
    let text = dry.stdout.join("\n");
    assert!(
        text.contains("3 functions in ") && text.contains("a uprobe each"),
        "{dry:?}"
    );
    let dry = testkit::run(BIN, &["--dry-run", &pattern]);
    let multi = testkit::feature_present(common_uprobe_multi(), "uprobe_multi", Some((6, 6)));
    if multi {
        assert!(
            dry.stdout.join("\n").contains("one uprobe_multi link"),
            "{dry:?}"
        );
    }
}

/// Whether this kernel has uprobe_multi links: the tool's own dry run says.
fn common_uprobe_multi() -> bool {
    let pattern = format!("{}:work_a", work_path());
    let dry = testkit::run(BIN, &["--dry-run", &pattern]);
    dry.stdout
        .iter()
        .any(|l| l.contains("one uprobe_multi link"))
}

#[test]
fn funccount_regular_expressions_match_whole_names() {
    let pattern = format!("{}:work_(a|b)", work_path());
    let (rows, f) = counted(&["-r", &pattern], &[]);
    assert_eq!(count(&rows, "work_a"), Some(N), "{f:?}");
    assert_eq!(count(&rows, "work_b"), Some(2 * N), "{f:?}");
    assert_eq!(rows.len(), 2, "{f:?}");
}

#[test]
fn funccount_counts_a_usdt_probe_where_any_kernel_has_uprobes() {
    let usdt = format!("u:{}:fctest:tick", work_path());
    let (rows, f) = counted(&[&usdt], &[]);
    assert_eq!(count(&rows, "tick"), Some(N), "{f:?}");
}

#[test]
fn funccount_counts_a_tracepoint_and_libc_by_name() {
    let (rows, f) = counted(&["t:syscalls:sys_enter_getppid", "c:malloc"], &[]);
    assert_eq!(count(&rows, "syscalls:sys_enter_getppid"), Some(N), "{f:?}");
    // The round's mallocs, and what stdio may add around them.
    let malloc = count(&rows, "malloc").unwrap_or(0);
    assert!((N..N + 10).contains(&malloc), "{malloc} mallocs: {f:?}");
}

#[test]
fn funccount_text_layout_is_bccs_with_the_fewest_first() {
    require_root();
    let mut work = start_work();
    let pid = work.pid();
    let pattern = format!("{}:work_*", work_path());
    let tool = Traced::start(BIN, &["-P", "-p", &pid, &pattern]);
    work.round();
    let f = testkit::settle_and_stop(tool, Duration::from_millis(200));
    assert!(f.status.success(), "{f:?}");
    let header = f
        .stdout
        .iter()
        .position(|l| l.split_whitespace().collect::<Vec<_>>() == ["PID", "COMM", "FUNC", "COUNT"])
        .unwrap_or_else(|| panic!("{f:?}"));
    let rows: Vec<Vec<&str>> = f.stdout[header + 1..]
        .iter()
        .take_while(|l| !l.is_empty() && *l != "Detaching...")
        .map(|l| l.split_whitespace().collect())
        .collect();
    let expect =
        |func: &str, n: u64| vec![pid.clone(), "fc-work".into(), func.into(), n.to_string()];
    let got: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(
        got,
        vec![
            expect("work_a", N),
            expect("work_b", 2 * N),
            expect("work_c", 3 * N)
        ],
        "{f:?}"
    );
    assert_eq!(
        f.stdout.last().map(String::as_str),
        Some("Detaching..."),
        "{f:?}"
    );
}

#[test]
fn funccount_intervals_print_what_each_added() {
    require_root();
    let mut work = start_work();
    let pid = work.pid();
    let pattern = format!("{}:work_a", work_path());
    let tool = Traced::start(BIN, &["--json", "-i", "1", "-p", &pid, &pattern]);
    work.round();
    // One report shows the round, the next nothing (no calls), the one
    // after the second round alone.
    std::thread::sleep(Duration::from_millis(2500));
    work.round();
    let f = testkit::settle_and_stop(tool, Duration::from_millis(1500));
    assert!(f.status.success(), "{f:?}");
    // Each round in a report of its own (a slow guest may split one
    // across two): both rounds' calls, in two reports at least.
    let counts: Vec<u64> = f
        .json()
        .iter()
        .map(|r| r["count"].as_u64().unwrap())
        .collect();
    assert_eq!(counts.iter().sum::<u64>(), 2 * N, "{f:?}");
    assert!(counts.len() >= 2, "{f:?}");
}

#[test]
fn funccount_kernel_functions_need_kprobes_and_say_so() {
    if testkit::refuses_kernel_functions_without_kprobes(BIN, &["-d", "1", "vfs_read"]) {
        return;
    }
    // Where kprobes exist (the VMs): the program's getppid() calls, at the
    // kernel's entry point for the call.
    if !cfg!(target_arch = "x86_64") {
        return;
    }
    let (rows, f) = counted(&["__x64_sys_getppid"], &[]);
    assert_eq!(count(&rows, "__x64_sys_getppid"), Some(N), "{f:?}");
}

#[test]
fn funccount_bad_probes_are_errors_naming_them() {
    let f = testkit::run(BIN, &["no-such-lib-anywhere:f"]);
    assert_eq!(f.status.code(), Some(1), "{f:?}");
    assert!(f.stderr.contains("no-such-lib-anywhere"), "{f:?}");
    let pattern = format!("{}:nothing_by_this_name*", work_path());
    let f = testkit::run(BIN, &[&pattern]);
    assert_eq!(f.status.code(), Some(1), "{f:?}");
    assert!(f.stderr.contains("no probe point matches"), "{f:?}");
    let f = testkit::run(BIN, &["t:sched:a:b"]);
    assert_eq!(f.status.code(), Some(2), "{f:?}");
    assert!(f.stderr.contains("too many"), "{f:?}");
    assert!(f.stderr.contains("t:sched:a:b (column 10: ':b')"), "{f:?}");
}

/// A pattern matching a function the kernel cannot probe (glibc's
/// pthread_spin_lock: uprobes refuse its first instruction): that one is
/// skipped and named, the rest counted.
#[test]
fn funccount_skips_what_cannot_be_probed_and_counts_the_rest() {
    // With cookies, and without (a copy of the program per function).
    for env in [&[][..], &[("BPFTOOLS_DISABLE", "attach_cookie")]] {
        let (rows, f) = counted(&["c:pthread_spin_*", "c:malloc"], env);
        let malloc = count(&rows, "malloc").unwrap_or(0);
        assert!((N..N + 10).contains(&malloc), "{malloc} mallocs: {f:?}");
        let note = f
            .stderr
            .lines()
            .find(|l| l.contains("cannot be probed"))
            .unwrap_or_else(|| panic!("{f:?}"));
        assert!(
            note.contains("skipped 1 of ") && note.ends_with(": pthread_spin_lock"),
            "{env:?}: {note}"
        );
    }
}
