//! syscount against a program of known calls: exactly N getppid() and M
//! failing open()s, made while the tool follows it (-p), counted exactly;
//! and its names against auditd's independent table (ausyscall).

use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use testkit::{Finished, Rounds, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_syscount");
const N: u64 = 5000;
const M: u64 = 37;

fn calls_binary() -> &'static std::path::PathBuf {
    static BUILT: OnceLock<std::path::PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        testkit::build_c_program(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "sc-calls",
        )
    })
}

/// The program, past "ready": its calls wait for a round.
fn start_calls() -> Rounds {
    Rounds::start(calls_binary(), &[N.to_string(), M.to_string()])
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

fn row<'a>(rows: &'a [Value], call: &str) -> Option<&'a Value> {
    rows.iter().find(|r| r["syscall"] == call)
}

fn counts_exactly(disable: &str) {
    let mut calls = start_calls();
    let pid = calls.pid();
    let all = testkit::start_disabled(BIN, &["--json", "-p", &pid, "-T", "50"], disable);
    let failed = testkit::start_disabled(BIN, &["--json", "-p", &pid, "-x"], disable);
    let enoent = testkit::start_disabled(BIN, &["--json", "-p", &pid, "-e", "ENOENT"], disable);
    // --prom-file after each report, from the totals its rows came from.
    let prom = std::env::temp_dir().join(format!("sc-prom-{}-{disable}.prom", std::process::id()));
    let timed = [
        "--json",
        "-p",
        &pid,
        "-L",
        "--prom-file",
        prom.to_str().unwrap(),
    ];
    let timed = testkit::start_disabled(BIN, &timed, disable);
    let by_process = testkit::start_disabled(BIN, &["-P", "-p", &pid], disable);
    // BCC's --tid and --syscall: the program's one thread, one call.
    let only = ["--json", "--tid", &pid, "--syscall", "getppid"];
    let only = testkit::start_disabled(BIN, &only, disable);
    let took = calls.round();
    let (all, failed, enoent, timed, by_process, only) = (
        stop(all).json(),
        stop(failed).json(),
        stop(enoent).json(),
        stop(timed).json(),
        stop(by_process),
        stop(only).json(),
    );
    assert_eq!(only.len(), 1, "{only:#?}");
    assert_eq!(only[0]["syscall"], "getppid", "{only:#?}");
    assert_eq!(only[0]["count"], N, "{only:#?}");
    assert_eq!(
        row(&all, "getppid").map(|r| &r["count"]),
        Some(&N.into()),
        "{all:#?}"
    );
    assert_eq!(
        row(&all, "openat").map(|r| &r["count"]),
        Some(&M.into()),
        "{all:#?}"
    );
    // -x: the failed opens, and nothing of the getppid()s.
    assert_eq!(
        row(&failed, "openat").map(|r| &r["count"]),
        Some(&M.into()),
        "{failed:#?}"
    );
    assert!(row(&failed, "getppid").is_none(), "{failed:#?}");
    assert_eq!(enoent.len(), 1, "{enoent:#?}");
    assert_eq!(enoent[0]["syscall"], "openat");
    assert_eq!(enoent[0]["count"], M);
    // -L: getppid's time, more than nothing and less than the loop took.
    let g = row(&timed, "getppid").unwrap_or_else(|| panic!("{timed:#?}"));
    assert_eq!(g["count"], N, "{g}");
    let total = g["total_ns"].as_u64().unwrap();
    assert!(
        total > 0 && (total as u128) < took.as_nanos(),
        "{total} ns of {took:?}: {g}"
    );
    assert_eq!(g["avg_ns"], total / N);
    let metrics = std::fs::read_to_string(&prom).unwrap_or_default();
    let _ = std::fs::remove_file(&prom);
    let line = format!("syscount_calls_total{{syscall=\"getppid\"}} {N}");
    assert!(metrics.lines().any(|l| l == line), "{line} in {metrics}");
    let micros = format!(
        "syscount_microseconds_total{{syscall=\"getppid\"}} {}",
        total / 1000
    );
    assert!(
        metrics.lines().any(|l| l == micros),
        "{micros} in {metrics}"
    );
    // -P: the process by its name, with at least its known calls.
    let line = by_process
        .stdout
        .iter()
        .find(|l| l.starts_with(&format!("{pid:<6} sc-calls ")))
        .unwrap_or_else(|| panic!("{:?}", by_process.stdout));
    let count: u64 = line.split_whitespace().last().unwrap().parse().unwrap();
    assert!(count >= N + M, "{line}");
    assert!(
        by_process
            .stdout
            .iter()
            .any(|l| l.starts_with("PID    COMM ")),
        "{:?}",
        by_process.stdout
    );
}

#[test]
fn syscount_counts_calls_exactly() {
    counts_exactly("");
}

/// raw_tp, the entry time in a hash map by thread (kernels without task
/// storage for tracing programs).
#[test]
fn syscount_variants_raw_tp() {
    let dry = testkit::run_with_env(BIN, &["--dry-run", "-L"], &[("BPFTOOLS_DISABLE", "tp_btf")]);
    assert!(
        dry.stdout.join("\n").contains("raw_tp sys_enter"),
        "{dry:?}"
    );
    counts_exactly("tp_btf");
}

/// The text, BCC's: a time line, the header, a row per call, the busiest
/// first; -T limits the rows.
#[test]
fn syscount_text_is_bccs() {
    let mut calls = start_calls();
    let pid = calls.pid();
    let text = testkit::start_disabled(BIN, &["-p", &pid, "-T", "2", "-L", "-m"], "");
    calls.round();
    let f = stop(text);
    let header = f
        .stdout
        .iter()
        .position(|l| l.starts_with("SYSCALL "))
        .unwrap_or_else(|| panic!("{:?}", f.stdout));
    assert_eq!(
        f.stdout[header],
        "SYSCALL                   COUNT        TIME (ms)     AVG (ms)"
    );
    assert!(f.stdout[header - 1].starts_with('['), "{:?}", f.stdout);
    let rows = &f.stdout[header + 1..];
    assert_eq!(rows.len(), 2, "-T 2: {rows:?}");
}

/// Every number auditd's table names (ausyscall --dump), syscount names
/// the same: two tables made apart.
#[test]
fn syscount_names_agree_with_ausyscall() {
    let dump = Command::new("ausyscall")
        .arg("--dump")
        .output()
        .expect("ausyscall (the auditd package) is needed");
    let ours = testkit::run(BIN, &["-l"]);
    assert!(ours.status.success(), "{ours:?}");
    let ours: std::collections::HashMap<&str, &str> = ours
        .stdout
        .iter()
        .filter_map(|l| l.split_once(' ').map(|(n, name)| (n.trim(), name.trim())))
        .collect();
    let text = String::from_utf8_lossy(&dump.stdout);
    let mut compared = 0;
    for line in text.lines().skip(1) {
        let Some((nr, name)) = line.split_once('\t') else {
            continue;
        };
        // auditd's own short names for two calls the kernel calls
        // pread64 and pwrite64 (its tracepoints and uapi header too).
        let kernels = match name {
            "pread" => "pread64",
            "pwrite" => "pwrite64",
            other => other,
        };
        assert_eq!(ours.get(nr).copied(), Some(kernels), "call {nr}");
        compared += 1;
    }
    assert!(compared > 300, "{compared} compared: {text}");
}

/// -P names each process by the name it has at the report, or had last:
/// a shell that executed dd is dd (its first calls were the shell's); a
/// hostile name is escaped in text and the very characters in JSON.
#[test]
fn syscount_p_names_processes_as_they_are_now_raw_in_json() {
    use std::io::Write;
    use std::process::Stdio;
    testkit::require_root();
    let spawn = |script: &str| {
        Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut execs = spawn("read x; exec dd if=/dev/zero of=/dev/null bs=1 count=20000 status=none");
    // DEL and a C1 control in its name, then calls (each redirection an
    // open and a close) under it; it stays until its stdin closes.
    let mut hostile = spawn(
        "printf 'd\\177c\\302\\233' > /proc/self/comm; read x; i=0; \
         while [ $i -lt 100 ]; do : > /dev/null; i=$((i+1)); done; read y",
    );
    let pids = format!("{},{}", execs.id(), hostile.id());
    let json = Traced::start(BIN, &["-P", "--json", "-p", &pids]);
    let text = Traced::start(BIN, &["-P", "-p", &pids]);
    for sh in [&mut execs, &mut hostile] {
        writeln!(sh.stdin.as_mut().unwrap(), "go").unwrap();
    }
    assert!(execs.wait().unwrap().success());
    std::thread::sleep(Duration::from_millis(300));
    let (json, text) = (stop(json), stop(text));
    drop(hostile.stdin.take());
    let _ = hostile.wait();
    let rows = json.json();
    let comm = |pid: u32| {
        rows.iter()
            .find(|r| r["pid"] == pid)
            .map(|r| r["comm"].clone())
            .unwrap_or_else(|| panic!("no row for {pid}: {rows:#?}"))
    };
    assert_eq!(comm(execs.id()), "dd", "{rows:#?}");
    assert_eq!(comm(hostile.id()), "d\u{7f}c\u{9b}", "{rows:#?}");
    let line = text
        .stdout
        .iter()
        .find(|l| l.starts_with(&format!("{:<6} ", hostile.id())))
        .unwrap_or_else(|| panic!("{:?}", text.stdout));
    assert!(line.contains(" d\\x7fc\\xc2\\x9b "), "{line}");
}
