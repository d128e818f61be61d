//! argdist against trace's test program (tools/trace/tests/tr-work.c):
//! each round calls pick(1, 2, 2, 3, 3, 3), alloc(64) 100 times and
//! alloc(4096) 10 times, nap() (10 ms) 5 times, answer() 3 times (42),
//! and fires trtest:tick(1..3, "usdt-str"); the counts and histograms
//! argdist reports for one round are checked exactly.

use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, Finished, Rounds, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_argdist");

fn work_binary() -> &'static std::path::PathBuf {
    static BUILT: OnceLock<std::path::PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        testkit::build_c_program_with(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../trace"),
            env!("CARGO_TARGET_TMPDIR"),
            "tr-work",
            "tr-work",
            &["-O0", "-g", "-fno-omit-frame-pointer"],
        )
    })
}

fn work(spec: &str) -> String {
    spec.replace("WORK", &work_binary().display().to_string())
}

/// Runs argdist with `args` (and --json, -p on a fresh program, one report
/// at the end) for one round; its objects, one per probe.
fn reported(args: &[&str]) -> (Vec<Value>, Finished) {
    require_root();
    let mut w = Rounds::start(work_binary(), &[]);
    let pid = w.pid();
    let args: Vec<String> = args.iter().map(|a| work(a)).collect();
    let mut cmd = Command::new(BIN);
    cmd.args(["--json", "-i", "600", "-p", &pid]).args(&args);
    let tool = Traced::start_command(&mut cmd);
    w.round();
    let f = testkit::settle_and_stop(tool, Duration::from_millis(300));
    assert!(f.status.success(), "{f:?}");
    (f.json(), f)
}

/// A count report's rows as (values, count).
fn counts(o: &Value) -> Vec<(Value, u64)> {
    o["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["values"].clone(), r["count"].as_u64().unwrap()))
        .collect()
}

/// A histogram's counts by slot low bound.
fn slots(o: &Value) -> Vec<(u64, u64)> {
    o["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["low"].as_u64().unwrap(), s["count"].as_u64().unwrap()))
        .collect()
}

#[test]
fn argdist_counts_each_argument_value() {
    let (objs, f) = reported(&["-C", "p:WORK:pick(long v):long:v"]);
    assert_eq!(objs.len(), 1, "{f:?}");
    let v = |n: i64| serde_json::json!({ "v": n });
    assert_eq!(counts(&objs[0]), [(v(1), 1), (v(2), 2), (v(3), 3)], "{f:?}");
}

#[test]
fn argdist_filters_and_keeps_the_top() {
    let (objs, f) = reported(&["-T", "1", "-C", "p:WORK:pick(long v):long:v:v > 1"]);
    assert_eq!(
        counts(&objs[0]),
        [(serde_json::json!({ "v": 3 }), 3)],
        "{f:?}"
    );
}

#[test]
fn argdist_histograms_sizes_in_their_log2_slots() {
    let (objs, f) = reported(&["-H", "p:WORK:alloc(unsigned long size):u64:size"]);
    assert_eq!(slots(&objs[0]), [(64, 100), (4096, 10)], "{f:?}");
    assert_eq!(objs[0]["total"], 100 * 64 + 10 * 4096, "{f:?}");
    // The histogram tools' JSON: the unit is the label the text shows.
    assert_eq!(objs[0]["count"], 110, "{f:?}");
    assert_eq!(objs[0]["unit"], "size", "{f:?}");
}

#[test]
fn argdist_reads_entry_arguments_at_the_return() {
    let (objs, f) = reported(&["-C", "r:WORK:alloc(unsigned long size):u64:$entry(size)"]);
    let entry = |n: u64| serde_json::json!({ "$entry(size)": n });
    assert_eq!(
        counts(&objs[0]),
        [(entry(4096), 10), (entry(64), 100)],
        "{f:?}"
    );
}

#[test]
fn argdist_histograms_latency_at_the_return() {
    let (objs, f) = reported(&["-H", "r:WORK:nap():u64:$latency"]);
    // 10 ms sleeps, in ns: most in the 8-16 ms slot (a loaded or emulated
    // machine oversleeps some), none faster.
    let s = slots(&objs[0]);
    let total: u64 = s.iter().map(|x| x.1).sum();
    assert_eq!(total, 5, "{f:?}");
    let in_slot = s.iter().find(|x| x.0 == 8_388_608).map_or(0, |x| x.1);
    assert!(in_slot >= 3, "{f:?}");
    assert!(s.iter().all(|x| x.0 >= 8_388_608), "{f:?}");
}

#[test]
fn argdist_counts_return_values_and_usdt_strings() {
    let (objs, f) = reported(&[
        "-C",
        "r:WORK:answer()",
        "-C",
        "u:WORK:tick():u64,char*:arg1,arg2#ticks",
    ]);
    assert_eq!(
        counts(&objs[0]),
        [(serde_json::json!({ "$retval": 42 }), 3)],
        "{f:?}"
    );
    assert_eq!(objs[1]["probe"], "ticks", "{f:?}");
    let ticks = counts(&objs[1]);
    assert_eq!(ticks.len(), 3, "{f:?}");
    for (i, (values, n)) in ticks.iter().enumerate() {
        assert_eq!(
            (values, *n),
            (&serde_json::json!({ "arg1": i + 1, "arg2": "usdt-str" }), 1),
            "{f:?}"
        );
    }
}

#[test]
fn argdist_prints_bccs_layout() {
    require_root();
    let mut w = Rounds::start(work_binary(), &[]);
    let pid = w.pid();
    let spec = work("p:WORK:pick(long v):long:v");
    let tool = Traced::start(BIN, &["-i", "600", "-p", &pid, "-C", &spec]);
    w.round();
    let f = testkit::settle_and_stop(tool, Duration::from_millis(300));
    let text = f.stdout.join("\n");
    let want = format!(
        "{spec}\n\tCOUNT      EVENT\n\t1          v = 1\n\t2          v = 2\n\t3          v = 3"
    );
    assert!(text.contains(&want), "{f:?}");
    // The banner, then each report under its time.
    assert!(f.stdout[0].starts_with("Tracing 1 probes"), "{f:?}");
    assert!(
        f.stdout[1].starts_with('[') && f.stdout[1].ends_with(']'),
        "{f:?}"
    );
}

#[test]
fn argdist_kernel_functions_need_kprobes_and_say_so() {
    if testkit::refuses_kernel_functions_without_kprobes(
        BIN,
        &["-C", "r::__x64_sys_getppid():int:$retval"],
    ) {
        return;
    }
    // Where kprobes exist (the VMs): the program's one open of
    // /etc/hostname, its latency kept from the entry of the system call
    // wrapper to its return.
    let (objs, f) = reported(&["-H", "r::__x64_sys_openat():u64:$latency"]);
    assert_eq!(objs[0]["count"], 1, "{f:?}");
}

/// Whether this kernel gives probes their attach cookie (5.15), which
/// several points of one kind need: a dry run says.
fn cookies() -> bool {
    require_root();
    let two = ["-C", "p:c:malloc():u64:arg1", "-C", "p:c:free():u64:arg1"];
    let dry = testkit::run(BIN, &[&["--dry-run"][..], &two].concat());
    let present = dry.status.success();
    if !present {
        assert!(dry.stderr.contains("bpf_get_attach_cookie"), "{dry:?}");
    }
    testkit::feature_present(present, "bpf_get_attach_cookie", Some((5, 15)))
}

#[test]
fn argdist_probes_of_one_function_attach_together() {
    // alloc's entry twice: its own probe, and the entry kept for the
    // return's $entry(size) (one multi link refuses a function twice).
    if !cookies() {
        return;
    }
    let (objs, f) = reported(&[
        "-C",
        "p:WORK:alloc(unsigned long size):u64:size",
        "-C",
        "r:WORK:alloc(unsigned long size):u64:$entry(size)",
    ]);
    let size = |n: u64| serde_json::json!({ "size": n });
    let entry = |n: u64| serde_json::json!({ "$entry(size)": n });
    assert_eq!(
        counts(&objs[0]),
        [(size(4096), 10), (size(64), 100)],
        "{f:?}"
    );
    assert_eq!(
        counts(&objs[1]),
        [(entry(4096), 10), (entry(64), 100)],
        "{f:?}"
    );
}

#[test]
fn argdist_counts_in_user_space_what_the_kernel_cannot() {
    // Arithmetic in the value and the filter: each hit is sent and
    // counted by argdist; the same calls as counted in the kernel.
    let spec = "p:WORK:pick(long v):long:v * 10:v % 2 == 1";
    let dry = testkit::run(BIN, &["--dry-run", "-C", &work(spec)]);
    assert!(
        !dry.stdout.join("\n").contains("counted in the kernel"),
        "{dry:?}"
    );
    let (objs, f) = reported(&["-C", spec]);
    let v = |n: i64| serde_json::json!({ "v * 10": n });
    assert_eq!(counts(&objs[0]), [(v(10), 1), (v(30), 3)], "{f:?}");
    let dry = testkit::run(
        BIN,
        &["--dry-run", "-C", &work("p:WORK:pick(long v):long:v")],
    );
    assert!(
        dry.stdout.join("\n").contains("counted in the kernel"),
        "{dry:?}"
    );
}

/// A flood of hits whose value is computed here (a 500-term expression)
/// faster than it can be: a stop signal still ends the run, with the
/// unread rest said, not a drain that never ends.
#[test]
fn argdist_ends_at_ctrl_c_under_a_flood() {
    require_root();
    let sum = vec!["size"; 500].join("+");
    let spec = format!("p:c:malloc(size_t size):u64:{sum}");
    let tool = Traced::start_command(Command::new(BIN).args(["-C", &spec]));
    let mut flood = Command::new("python3")
        .args([
            "-c",
            "while True:\n    x = [bytearray(64) for _ in range(10000)]",
        ])
        .spawn()
        .expect("python3");
    std::thread::sleep(Duration::from_secs(2));
    let started = std::time::Instant::now();
    let f = tool.stop();
    let _ = flood.kill();
    let _ = flood.wait();
    assert!(f.status.success(), "{f:?}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?} to end",
        started.elapsed()
    );
}
