//! trace against a program of known calls (tr-work.c): each round calls
//! greet("world", 1..3), answer(1..3) (each returning 42), pick(1, 2, 2, 3,
//! 3, 3), fires the USDT probe trtest:tick(1..3, "usdt-str") and opens
//! /etc/hostname once; the lines trace prints for it are checked exactly.

use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, Finished, Rounds, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_trace");

fn work_binary() -> &'static std::path::PathBuf {
    static BUILT: OnceLock<std::path::PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        testkit::build_c_program_with(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "tr-work",
            "tr-work",
            &["-O0", "-g", "-fno-omit-frame-pointer"],
        )
    })
}

fn work(probe: &str) -> String {
    probe.replace("WORK", &work_binary().display().to_string())
}

/// Runs trace with `args` (and --json, -p on a fresh program) for one
/// round; its lines.
fn traced(args: &[&str]) -> (Vec<Value>, Finished, String) {
    require_root();
    let mut w = Rounds::start(work_binary(), &[]);
    let pid = w.pid();
    let args: Vec<String> = args.iter().map(|a| work(a)).collect();
    let mut cmd = Command::new(BIN);
    cmd.args(["--json", "-p", &pid]).args(&args);
    let tool = Traced::start_command(&mut cmd);
    w.round();
    let f = testkit::settle_and_stop(tool, Duration::from_millis(300));
    assert!(f.status.success(), "{f:?}");
    (f.json(), f, pid)
}

fn messages(rows: &[Value], func: &str) -> Vec<String> {
    rows.iter()
        .filter(|r| r["func"] == func)
        .map(|r| r["message"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn trace_shows_a_string_and_an_integer_argument_exactly() {
    let (rows, f, pid) = traced(&["WORK:greet \"%s %d\", arg1, arg2"]);
    assert_eq!(
        messages(&rows, "greet"),
        ["world 1", "world 2", "world 3"],
        "{f:?}"
    );
    for r in &rows {
        assert_eq!(r["pid"].as_u64().unwrap().to_string(), pid, "{f:?}");
        assert_eq!(r["comm"], "tr-work", "{f:?}");
    }
}

#[test]
fn trace_filters_in_the_kernel_and_in_user_space() {
    // A comparison with a constant (made in the kernel).
    let (rows, f, _) = traced(&["WORK:pick (arg1 == 2) \"v=%d\", arg1"]);
    assert_eq!(messages(&rows, "pick"), ["v=2", "v=2"], "{f:?}");
    // Arithmetic (made by trace on each hit sent).
    let (rows, f, _) = traced(&["WORK:pick (arg1 * 2 == 6) \"v=%d\", arg1"]);
    assert_eq!(messages(&rows, "pick"), ["v=3", "v=3", "v=3"], "{f:?}");
    // A signature's parameter, and a string comparison.
    let (rows, f, _) = traced(&[
        "WORK:greet(const char *who, long n) (STRCMP(\"world\", who) && n != 2) \"%s/%d\", who, n",
    ]);
    assert_eq!(messages(&rows, "greet"), ["world/1", "world/3"], "{f:?}");
}

#[test]
fn trace_shows_the_return_value() {
    let (rows, f, _) = traced(&["r:WORK:answer (retval == 42) \"%d\", retval"]);
    assert_eq!(messages(&rows, "answer"), ["42", "42", "42"], "{f:?}");
}

#[test]
fn trace_takes_several_probes_in_one_run() {
    let (rows, f, _) = traced(&["WORK:greet \"%d\", arg2", "r:WORK:answer \"%d\", retval"]);
    let lines: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["func"].as_str().unwrap().into(),
                r["message"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("greet", "1"),
        ("greet", "2"),
        ("greet", "3"),
        ("answer", "42"),
        ("answer", "42"),
        ("answer", "42"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(lines, want, "{f:?}");
}

#[test]
fn trace_reads_usdt_arguments() {
    let (rows, f, _) = traced(&["u:WORK:tick \"%d %s\", arg1, arg2"]);
    assert_eq!(
        messages(&rows, "tick"),
        ["1 usdt-str", "2 usdt-str", "3 usdt-str"],
        "{f:?}"
    );
}

#[test]
fn trace_reads_tracepoint_fields_by_name() {
    let (rows, f, _) = traced(&[
        "t:syscalls:sys_enter_openat (STRCMP(\"/etc/hostname\", args->filename)) \"%s %d\", args->filename, args->flags",
    ]);
    // O_RDONLY, as the program opens it.
    assert_eq!(
        messages(&rows, "sys_enter_openat"),
        ["/etc/hostname 0"],
        "{f:?}"
    );
}

/// Two probes on one tracepoint, as BCC allows: each its own line.
#[test]
fn trace_takes_two_probes_on_one_tracepoint() {
    let probes = [
        "t:syscalls:sys_enter_openat (STRCMP(\"/etc/hostname\", args->filename)) \"a %s\", args->filename",
        "t:syscalls:sys_enter_openat (STRCMP(\"/etc/hostname\", args->filename)) \"b %d\", args->flags",
    ];
    // Two points of one kind need the attach cookie (5.15): said before.
    require_root();
    let dry = testkit::run(BIN, &["--dry-run", probes[0], probes[1]]);
    let present = dry.status.success();
    if !present {
        assert!(dry.stderr.contains("bpf_get_attach_cookie"), "{dry:?}");
    }
    if !testkit::feature_present(present, "bpf_get_attach_cookie", Some((5, 15))) {
        return;
    }
    let (rows, f, _) = traced(&probes);
    let mut got = messages(&rows, "sys_enter_openat");
    got.sort();
    assert_eq!(got, ["a /etc/hostname", "b 0"], "{f:?}");
}

#[test]
fn trace_stops_after_max_events() {
    require_root();
    let mut w = Rounds::start(work_binary(), &[]);
    let pid = w.pid();
    let probe = work("WORK:pick \"%d\", arg1");
    let tool = Traced::start(BIN, &["-M", "2", "-p", &pid, &probe]);
    w.round();
    let f = tool.wait(Duration::from_secs(10));
    assert!(f.status.success(), "{f:?}");
    // The header, then two lines (BCC's layout).
    assert_eq!(f.stdout.len(), 3, "{f:?}");
    assert!(
        f.stdout[0].starts_with("PID     TID     COMM            FUNC"),
        "{f:?}"
    );
    for (line, v) in f.stdout[1..].iter().zip(["1", "2"]) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            cols,
            [pid.as_str(), pid.as_str(), "tr-work", "pick", v],
            "{f:?}"
        );
    }
}

#[test]
fn trace_user_stacks_name_the_caller() {
    let (rows, f, _) = traced(&["-U", "WORK:pick (arg1 == 1)"]);
    assert_eq!(rows.len(), 1, "{f:?}");
    let stack: Vec<&str> = rows[0]["user_stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(stack[0].starts_with("pick+"), "{f:?}");
    // round_of, or main where it was inlined: the caller, not lost to
    // the frame not yet set up at the function's first instruction.
    assert!(
        stack[1].starts_with("round_of+") || stack[1].starts_with("main+"),
        "{f:?}"
    );
}

/// At -O1 pick() has no frame (gcc omits it in a leaf): its probe stays at
/// the entry, where the caller's return address is on top of the stack;
/// the caller is shown, not skipped by the frame pointer walk.
#[test]
fn trace_user_stacks_name_the_caller_of_a_leaf_without_a_frame() {
    static O1: OnceLock<std::path::PathBuf> = OnceLock::new();
    let o1 = O1.get_or_init(|| {
        testkit::build_c_program_with(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "tr-work",
            "tr-work-o1",
            &["-O1", "-g", "-fno-omit-frame-pointer"],
        )
    });
    require_root();
    let mut w = Rounds::start(o1, &[]);
    let probe = format!("{}:pick (arg1 == 1)", o1.display());
    let tool =
        Traced::start_command(Command::new(BIN).args(["--json", "-U", "-p", &w.pid(), &probe]));
    w.round();
    let f = testkit::settle_and_stop(tool, Duration::from_millis(300));
    let rows = f.json();
    assert_eq!(rows.len(), 1, "{f:?}");
    let stack: Vec<&str> = rows[0]["user_stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(stack[0].starts_with("pick+"), "{f:?}");
    assert!(
        stack[1].starts_with("round_of+") || stack[1].starts_with("main+"),
        "{f:?}"
    );
}

#[test]
fn trace_kernel_functions_need_kprobes_and_say_so() {
    if testkit::refuses_kernel_functions_without_kprobes(BIN, &["p::__x64_sys_openat"]) {
        return;
    }
    // Where kprobes exist (the VMs): the system call wrapper's arguments
    // are read from the registers it was given, and its return.
    let (rows, f, _) = traced(&[
        "p::__x64_sys_openat (STRCMP(\"/etc/hostname\", arg2)) \"%s\", arg2",
        "r::__x64_sys_openat \"%d\", retval",
    ]);
    // The program's one open: its entry, then its return, the new
    // descriptor (0-2 are taken).
    let lines = messages(&rows, "__x64_sys_openat");
    assert_eq!(lines.len(), 2, "{f:?}");
    assert_eq!(lines[0], "/etc/hostname", "{f:?}");
    let fd: i64 = lines[1].parse().unwrap_or(-1);
    assert!(fd >= 3, "{f:?}");
}

/// A string in a page the process has not touched yet (its first use):
/// the probe cannot read it, the front end reads it from the process.
/// Without sleepable uprobes (5.10; the dry run says which) the front end
/// reads it after the hit, from the process as it is then: the string
/// where its page is still mapped, else (unmapped after the fifth call)
/// `[unreadable]`; never shown empty or wrong.
#[test]
fn trace_shows_a_string_on_its_first_call() {
    let probe = work("WORK:first \"%s\", arg1");
    let dry = testkit::run(BIN, &["--dry-run", &probe]);
    assert!(dry.status.success(), "{dry:?}");
    let prefaults = dry.stdout.iter().any(|l| l.contains("(tr_prefault"));
    let (rows, f, _) = traced(&["WORK:first \"%s\", arg1"]);
    let got = messages(&rows, "first");
    assert_eq!(got.len(), 5, "{f:?}");
    let first = got[0].as_str();
    assert!(
        first == "first-call-string" || (!prefaults && first == "[unreadable]"),
        "{f:?}\n{dry:?}"
    );
    assert!(got[1..].iter().all(|m| m == "first-call-string"), "{f:?}");
}

/// Traced strings are escaped in text (one line, no control characters)
/// and the very characters in JSON.
#[test]
fn trace_escapes_traced_strings_in_text() {
    const RAW: &str = "bad\u{1b}[31m\r\nline\u{7}\u{7f}\u{202e}!";
    let (rows, f, _) = traced(&["WORK:shout \"%s\", arg1"]);
    assert_eq!(messages(&rows, "shout"), [RAW], "{f:?}");
    require_root();
    let mut w = Rounds::start(work_binary(), &[]);
    let tool = Traced::start_command(Command::new(BIN).args([
        "-p",
        &w.pid(),
        &work("WORK:shout \"%s\", arg1"),
    ]));
    w.round();
    let text = testkit::settle_and_stop(tool, Duration::from_millis(300));
    let lines: Vec<&String> = text.stdout.iter().filter(|l| l.contains("shout")).collect();
    assert_eq!(lines.len(), 1, "{:?}", text.stdout);
    assert!(
        lines[0].ends_with("bad\\x1b[31m\\r\\nline\\x07\\x7f\\u{202e}!"),
        "{}",
        lines[0]
    );
    assert!(
        !testkit::contract::holds_raw_controls(lines[0]),
        "{}",
        lines[0]
    );
}
