//! threadsnoop against a program of the test's own (thr-work.c): four
//! threads made by pthread_create(), each starting in worker(), and one
//! made by a raw clone(): five lines, each new thread once, the four with
//! their start function and the fifth without one.

use std::collections::HashSet;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_threadsnoop");

/// The tool (`args`, `disable`) on one run of thr-work; its events and
/// the workload's pid.
fn trace(args: &[&str], disable: &str) -> (testkit::Finished, u32) {
    let prog = testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "thr-work",
    );
    testkit::trace_pid(
        Command::new(&prog).args(["4", "1"]),
        BIN,
        args,
        disable,
        |_| {},
    )
}

/// The five threads: each once, made by the workload, four in worker().
fn check(events: &[Value], pid: u32) {
    assert_eq!(events.len(), 5, "{events:#?}");
    let mut tids = HashSet::new();
    for e in events {
        assert_eq!(e["pid"], pid, "{e}");
        assert_eq!(e["comm"], "thr-work", "{e}");
        let tid = e["new_tid"].as_u64().unwrap();
        assert!(tid != u64::from(pid) && tids.insert(tid), "{e}");
        assert_ne!(e["clone_flags"].as_u64().unwrap() & 0x10000, 0, "{e}");
    }
    let funcs: Vec<&Value> = events.iter().map(|e| &e["func"]).collect();
    assert!(funcs[..4].iter().all(|f| *f == "worker"), "{events:#?}");
    assert!(
        funcs[4].is_null() && events[4]["start"].is_null(),
        "{events:#?}"
    );
}

#[test]
fn threadsnoop_shows_each_thread_with_its_start_function() {
    let (f, pid) = trace(&["--json"], "");
    check(&f.json(), pid);
}

#[test]
fn threadsnoop_prints_bccs_layout() {
    let (f, pid) = trace(&[], "");
    assert_eq!(
        f.stdout[0],
        "TIME(ms)   PID     TID     COMM             FUNC"
    );
    let lines: Vec<Vec<&str>> = f.stdout[1..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines.len(), 5, "{:?}", f.stdout);
    assert_eq!(lines[0][0], "0", "{:?}", f.stdout);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l[1], pid.to_string(), "{l:?}");
        assert_eq!(l[3], "thr-work", "{l:?}");
        assert_eq!(l[4], if i < 4 { "worker" } else { "-" }, "{l:?}");
    }
}

/// Each variant of task_newtask (tp_btf, raw_tp, the classic tracepoint)
/// sees the same five threads.
#[test]
fn threadsnoop_hook_variants() {
    for (disable, hook) in [
        ("tp_btf", "raw_tp task_newtask"),
        ("tp_btf,raw_tp", "tracepoint task:task_newtask"),
    ] {
        let (f, pid) = trace(&["--json", "-v"], disable);
        assert!(f.stderr.contains(hook), "{hook}: {}", f.stderr);
        check(&f.json(), pid);
    }
}
