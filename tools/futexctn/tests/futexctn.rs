//! futexctn against contention of the test's own (futex-work.c): a worker
//! thread that waits ROUNDS times for a mutex the main thread holds at
//! least HOLD_MS after seeing it wait, then one condition variable wait of
//! the main thread (--all's).

use std::process::Command;

use serde_json::Value;
use testkit::unique;

const BIN: &str = env!("CARGO_BIN_EXE_futexctn");
const ROUNDS: u64 = 10;
const HOLD_MS: u64 = 5;

/// What the workload wrote: its mutex's and condition variable's
/// addresses, and the worker's thread id.
struct Work {
    pid: u32,
    lock: u64,
    cond: u64,
    worker: u32,
}

/// The tool (`args`, then `-p PID`, then `more(&work)`, hooks in `disable`
/// off) on one run of the workload, placed by `place` first.
fn trace_with(
    args: &[&str],
    more: impl FnOnce(&Work) -> Vec<String>,
    disable: &str,
    place: impl FnOnce(u32),
) -> (testkit::Finished, Work) {
    testkit::require_root();
    let prog = testkit::build_c_program_with(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "futex-work",
        "futex-work",
        &["-O1", "-g", "-fno-omit-frame-pointer", "-pthread"],
    );
    let addr_file =
        testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR")).join(unique("futexctn-addrs-"));
    let mut work = None;
    let f = testkit::trace_stopped(
        Command::new(&prog)
            .arg(&addr_file)
            .args([ROUNDS.to_string(), HOLD_MS.to_string()]),
        |pid| {
            place(pid);
            let text = std::fs::read_to_string(&addr_file).unwrap();
            let fields: Vec<&str> = text.split_whitespace().collect();
            let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
            let w = Work {
                pid,
                lock: hex(fields[0]),
                cond: hex(fields[1]),
                worker: fields[2].parse().unwrap(),
            };
            let mut tool = Command::new(BIN);
            tool.args(args)
                .args(["-p", &pid.to_string()])
                .args(more(&w))
                .env("BPFTOOLS_DISABLE", disable);
            work = Some(w);
            tool
        },
    );
    let _ = std::fs::remove_file(&addr_file);
    (f, work.unwrap())
}

fn trace(args: &[&str], disable: &str) -> (testkit::Finished, Work) {
    trace_with(args, |_| Vec::new(), disable, |_| {})
}

fn lock_of(h: &Value) -> u64 {
    let s = h["lock"].as_str().unwrap();
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

/// The worker's waits: ROUNDS on the mutex, each at least HOLD_MS, with
/// the workload's functions in the stack; nothing else of the process in
/// the lock waits.
fn check_lock_waits(hists: &[Value], w: &Work) {
    assert_eq!(hists.len(), 1, "{hists:?}");
    let h = &hists[0];
    assert_eq!(lock_of(h), w.lock, "{h}");
    assert_eq!(h["pid"], w.pid, "{h}");
    assert_eq!(h["comm"], "futex-work", "{h}");
    assert_eq!(h["count"], ROUNDS, "{h}");
    assert_eq!(h["unit"], "usecs", "{h}");
    let (min, max) = (h["min"].as_u64().unwrap(), h["max"].as_u64().unwrap());
    assert!(min >= HOLD_MS * 1000 && max >= min, "{h}");
    assert!(h["total"].as_u64().unwrap() >= ROUNDS * min, "{h}");
    let in_buckets: u64 = h["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(in_buckets, ROUNDS, "{h}");
}

fn has_frame(h: &Value, name: &str) -> bool {
    h["stack"]
        .as_array()
        .is_some_and(|s| s.iter().any(|f| f == name))
}

#[test]
fn futexctn_shows_the_workers_waits_on_the_mutex() {
    let (f, w) = trace(&["--json"], "");
    let hists = f.json();
    check_lock_waits(&hists, &w);
    // The thread's function (the one that called pthread_mutex_lock is
    // skipped by the frame pointer walk from inside the C library).
    assert!(has_frame(&hists[0], "worker"), "{}", hists[0]);
}

/// libbpf-tools' layout: the header line, the stack between dashes, the
/// histogram.
#[test]
fn futexctn_prints_libbpf_tools_layout() {
    let (f, w) = trace(&[], "");
    let out = &f.stdout;
    let head = format!(
        "futex-work[{}] lock {:#x} contended {ROUNDS} times, ",
        w.pid, w.lock
    );
    let at = out
        .iter()
        .position(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("no {head:?}: {f:?}"));
    assert!(
        out[at].contains(" avg usecs [max: ") && out[at].ends_with(" usecs]"),
        "{}",
        out[at]
    );
    assert_eq!(out[at + 1], "    -", "{f:?}");
    let end = at + 2 + out[at + 2..].iter().position(|l| l == "    -").unwrap();
    assert!(out[at + 2..end].iter().any(|l| l == "    worker"), "{f:?}");
    assert_eq!(
        out[end + 1].trim_end(),
        "     usecs               : count    distribution",
        "{f:?}"
    );
    let counted: u64 = out[end + 2..]
        .iter()
        .take_while(|l| l.contains("->"))
        .map(|l| {
            l.split(':')
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
        })
        .map(|c| c.parse::<u64>().unwrap())
        .sum();
    assert_eq!(counted, ROUNDS, "{f:?}");
}

/// -s -m: by process and lock, in milliseconds, no stacks; -t with the
/// worker's thread.
#[test]
fn futexctn_summary_in_milliseconds_for_one_thread() {
    let (f, w) = trace_with(
        &["--json", "-s", "-m"],
        |w| vec!["-t".into(), w.worker.to_string()],
        "",
        |_| {},
    );
    let hists = f.json();
    assert_eq!(hists.len(), 1, "{f:?}");
    let h = &hists[0];
    assert_eq!(lock_of(h), w.lock, "{h}");
    assert_eq!(h["count"], ROUNDS, "{h}");
    assert_eq!(h["unit"], "msecs", "{h}");
    assert!(h["min"].as_u64().unwrap() >= HOLD_MS, "{h}");
    assert!(h.get("stack").is_none(), "{h}");
}

/// --all: the condition variable's wait (FUTEX_WAIT_BITSET) too, by the
/// main thread, on a word inside the condition variable; -l keeps one
/// lock.
#[test]
fn futexctn_all_shows_the_condition_variable_wait() {
    let (f, w) = trace(&["--json", "--all"], "");
    let hists = f.json();
    let cond: Vec<&Value> = hists
        .iter()
        .filter(|h| (w.cond..w.cond + 48).contains(&lock_of(h)))
        .collect();
    assert_eq!(cond.len(), 1, "{f:?}");
    assert_eq!(cond[0]["count"], 1, "{}", cond[0]);
    assert!(
        cond[0]["min"].as_u64().unwrap() >= HOLD_MS * 1000,
        "{}",
        cond[0]
    );
    assert!(hists.iter().any(|h| lock_of(h) == w.lock), "{f:?}");

    let (f, w) = trace_with(
        &["--json", "--all"],
        |w| vec!["-l".into(), format!("{:#x}", w.lock)],
        "",
        |_| {},
    );
    check_lock_waits(&f.json(), &w);
}

/// --per-container: the histogram of the workload's container, named.
#[test]
fn futexctn_per_container_names_the_container() {
    let docker = testkit::FakeContainer::docker();
    let (f, w) = trace_with(
        &["--json", "--per-container"],
        |_| Vec::new(),
        "",
        |p| std::fs::write(docker.dir.join("cgroup.procs"), p.to_string()).unwrap(),
    );
    let hists = f.json();
    check_lock_waits(&hists, &w);
    assert_eq!(hists[0]["container"], docker.short_id(), "{}", hists[0]);
}

/// The calls' own tracepoints and, where those are missing, tp_btf at
/// every call: the same waits.
#[test]
fn futexctn_hook_variants() {
    for (disable, hook) in [
        ("", "tracepoint syscalls:sys_enter_futex"),
        ("tracepoint", "tp_btf sys_enter"),
    ] {
        let (f, w) = trace(&["--json", "-v"], disable);
        assert!(f.stderr.contains(hook), "{hook}: {}", f.stderr);
        let hists = f.json();
        check_lock_waits(&hists, &w);
        assert!(has_frame(&hists[0], "worker"), "{}", hists[0]);
    }
}
