//! exitsnoop against children that end in known ways: exit codes, a
//! SIGKILL, a thread that ends alone, a main thread that ends before the
//! rest of its process; each with its age, known to the sleep.

use std::process::{Child, Command};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;
use testkit::{require_root, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_exitsnoop");

fn child_binary() -> &'static std::path::PathBuf {
    static BUILT: OnceLock<std::path::PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        testkit::build_c_program(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "ex-child",
        )
    })
}

/// Starts the child with `args`, past its "ready" line.
fn spawn(args: &[&str]) -> Child {
    testkit::spawn_ready(Command::new(child_binary()).args(args))
}

/// Runs the child with `args` to its end; returns its pid and the time
/// from before its spawn to after its end: the most it can have lived.
fn run(args: &[&str]) -> (u32, f64) {
    let t = Instant::now();
    let mut child = spawn(args);
    let pid = child.id();
    child.wait().unwrap();
    (pid, t.elapsed().as_secs_f64())
}

fn start(args: &[&str]) -> Traced {
    testkit::start_disabled(BIN, args, "")
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

fn of_pid(events: &[Value], pid: u32) -> Vec<&Value> {
    events.iter().filter(|e| e["pid"] == pid).collect()
}

/// The age is at least the time slept, and at most the time the test saw
/// the child live (the exec and the loader's work come before the sleep:
/// a tenth of a second in an emulated machine).
fn assert_age(e: &Value, slept: f64, lived: f64) {
    let age = e["age"].as_f64().unwrap();
    assert!(
        age >= slept && age <= lived + 0.01,
        "age {age}: {slept} s slept, {lived} s lived: {e}"
    );
}

#[test]
fn exitsnoop_codes_signals_and_ages() {
    let json = start(&["--json"]);
    let failed = start(&["--json", "-x"]);
    let text = start(&[]);
    let (ok, ok_lived) = run(&["exit", "0", "200"]);
    let (three, three_lived) = run(&["exit", "3", "300"]);
    let t = Instant::now();
    let mut waiting = spawn(&["wait"]);
    std::thread::sleep(Duration::from_millis(500));
    waiting.kill().unwrap();
    waiting.wait().unwrap();
    let (killed, killed_lived) = (waiting.id(), t.elapsed().as_secs_f64());
    let (json, failed, text) = (stop(json), stop(failed), stop(text));
    let events = json.json();
    let me = std::process::id();
    for (pid, code, signal, slept, lived) in [
        (ok, 0, None, 0.2, ok_lived),
        (three, 3, None, 0.3, three_lived),
        (killed, 0, Some("KILL"), 0.5, killed_lived),
    ] {
        let mine = of_pid(&events, pid);
        assert_eq!(mine.len(), 1, "{pid}: {events:#?}");
        let e = mine[0];
        assert_eq!(e["exit_code"], code, "{e}");
        assert_eq!(e["signal"].as_str(), signal, "{e}");
        assert_eq!(e["core_dumped"], false, "{e}");
        assert_eq!(e["ppid"], me, "{e}");
        assert_eq!(e["tid"], pid, "{e}");
        assert_eq!(e["comm"], "ex-child", "{e}");
        assert_age(e, slept, lived);
    }
    // -x: the failures only.
    let failures = failed.json();
    assert!(of_pid(&failures, ok).is_empty(), "{failures:#?}");
    assert_eq!(of_pid(&failures, three).len(), 1, "{failures:#?}");
    assert_eq!(of_pid(&failures, killed).len(), 1, "{failures:#?}");
    // BCC's text.
    assert_eq!(
        text.stdout[0],
        "PCOMM            PID     PPID    TID     AGE(s)  EXIT_CODE"
    );
    let line = |pid: u32| {
        text.stdout
            .iter()
            .find(|l| l.split_whitespace().nth(1) == Some(&pid.to_string()))
            .unwrap_or_else(|| panic!("{pid}: {:?}", text.stdout))
            .clone()
    };
    assert!(line(ok).ends_with(" 0"), "{}", line(ok));
    assert!(line(three).ends_with(" code 3"), "{}", line(three));
    assert!(
        line(killed).ends_with(" signal 9 (KILL)"),
        "{}",
        line(killed)
    );
}

/// A thread that ends alone is seen with --per-thread only; a process's
/// exit is its last thread's, so a main thread that ends first does not
/// end the process: the other thread's exit(5) does, and is shown.
#[test]
fn exitsnoop_threads_and_the_last_thread_of_a_process() {
    let processes = start(&["--json"]);
    let threads = start(&["--json", "--per-thread"]);
    let (alone, alone_lived) = run(&["thread", "300", "600"]);
    let (leader_first, leader_lived) = run(&["leader", "400", "5"]);
    let (processes, threads) = (stop(processes).json(), stop(threads).json());
    // The thread that ended alone, then the process.
    let each = of_pid(&threads, alone);
    assert_eq!(each.len(), 2, "{threads:#?}");
    assert_ne!(each[0]["tid"], alone, "{}", each[0]);
    assert_eq!(each[0]["exit_code"], 0, "{}", each[0]);
    assert_age(each[0], 0.3, alone_lived);
    assert_eq!(each[1]["tid"], alone, "{}", each[1]);
    let once = of_pid(&processes, alone);
    assert_eq!(once.len(), 1, "{processes:#?}");
    assert_eq!(once[0]["tid"], alone);
    assert_age(once[0], 0.6, alone_lived);
    // The process ended when its last thread did, with that thread's code.
    let last = of_pid(&processes, leader_first);
    assert_eq!(last.len(), 1, "{processes:#?}");
    assert_ne!(last[0]["tid"], leader_first, "{}", last[0]);
    assert_eq!(last[0]["exit_code"], 5, "{}", last[0]);
    assert_age(last[0], 0.4, leader_lived);
}

#[test]
fn exitsnoop_pid_filter_timestamps_and_labels() {
    let mut target = spawn(&["wait"]);
    let pid = target.id().to_string();
    let tool = start(&["--utc", "--label", "ex", "-p", &pid]);
    run(&["exit", "1", "50"]);
    target.kill().unwrap();
    target.wait().unwrap();
    let f = stop(tool);
    assert!(
        f.stdout[0].starts_with("TIME-UTC     LABEL PCOMM"),
        "{:?}",
        f.stdout
    );
    assert_eq!(f.stdout.len(), 2, "only -p's process: {:?}", f.stdout);
    let cells: Vec<&str> = f.stdout[1].split_whitespace().collect();
    // HH:MM:SS.mmm, the label, the comm, the pid.
    assert_eq!(cells[0].len(), 12, "{cells:?}");
    assert_eq!(&cells[0][8..9], ".");
    assert_eq!(cells[1..4], ["ex", "ex-child", pid.as_str()]);
}

#[test]
fn exitsnoop_hook_variants() {
    require_root();
    for (disable, hook) in [
        ("", "tp_btf sched_process_exit"),
        ("tp_btf", "raw_tp sched_process_exit"),
        ("tp_btf,raw_tp", "tracepoint sched:sched_process_exit"),
    ] {
        let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
        assert!(dry.status.success(), "{dry:?}");
        assert!(dry.stdout.join("\n").contains(hook), "{hook}: {dry:?}");
        let tool = testkit::start_disabled(BIN, &["--json", "-x"], disable);
        let (pid, lived) = run(&["exit", "7", "100"]);
        let events = stop(tool).json();
        let mine = of_pid(&events, pid);
        assert_eq!(mine.len(), 1, "{disable}: {events:#?}");
        assert_eq!(mine[0]["exit_code"], 7);
        assert_age(mine[0], 0.1, lived);
    }
}
