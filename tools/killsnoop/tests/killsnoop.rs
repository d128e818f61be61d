//! killsnoop against signals of the test's own: SIGUSR1 to a sleeping
//! child (one line, both pids, delivered), a signal to a pid that no
//! longer exists (the call's error), the kernel's SIGCHLD, and each filter.

use std::process::{Child, Command};
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_killsnoop");

fn start(args: &[&str]) -> Traced {
    testkit::start_disabled(BIN, args, "")
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

fn sleeper() -> Child {
    Command::new("sleep").arg("30").spawn().unwrap()
}

/// A pid that was a process's and is free now: a child's, reaped.
fn free_pid() -> i32 {
    let mut c = Command::new("true").spawn().unwrap();
    c.wait().unwrap();
    c.id() as i32
}

fn kill(pid: i32, sig: i32) -> i32 {
    // SAFETY: kill(2) with plain integers.
    let r = unsafe { libc::kill(pid, sig) };
    if r < 0 {
        -std::io::Error::last_os_error().raw_os_error().unwrap()
    } else {
        r
    }
}

fn to(events: &[Value], tpid: i32) -> Vec<&Value> {
    events.iter().filter(|e| e["tpid"] == tpid).collect()
}

/// Sends SIGUSR1 to a sleeping child and SIGUSR2 to a free pid; returns
/// (the child's pid, the free pid), the child killed and reaped after.
fn signals() -> (i32, i32) {
    let mut child = sleeper();
    let pid = child.id() as i32;
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(kill(pid, libc::SIGUSR1), 0);
    let gone = free_pid();
    assert_eq!(kill(gone, libc::SIGUSR2), -libc::ESRCH);
    let _ = child.wait();
    (pid, gone)
}

#[test]
fn killsnoop_sees_a_signal_and_a_failed_kill() {
    let json = start(&["--json"]);
    let calls = start(&["--json", "-k"]);
    let text = start(&[]);
    let (pid, gone) = signals();
    let (json, calls, text) = (stop(json), stop(calls), stop(text));
    let me = std::process::id();
    // By default: the signal generated, once, and the call that failed.
    let events = json.json();
    let usr1 = to(&events, pid);
    let usr1: Vec<&&Value> = usr1.iter().filter(|e| e["sig"] == libc::SIGUSR1).collect();
    assert_eq!(usr1.len(), 1, "{events:#?}");
    let e = usr1[0];
    assert_eq!(e["pid"], me, "{e}");
    assert_eq!(e["signal"], "USR1", "{e}");
    assert_eq!(e["result"], 0, "{e}");
    assert_eq!(e["source"], "generated", "{e}");
    assert_eq!(e["tcomm"], "sleep", "{e}");
    // The child's end makes a SIGCHLD, to the test, from the kernel.
    assert!(
        events
            .iter()
            .any(|e| e["sig"] == libc::SIGCHLD && e["pid"] == pid),
        "{events:#?}"
    );
    let failed = to(&events, gone);
    assert_eq!(failed.len(), 1, "{events:#?}");
    assert_eq!(failed[0]["result"], -libc::ESRCH, "{}", failed[0]);
    assert_eq!(failed[0]["source"], "kill", "{}", failed[0]);
    assert_eq!(failed[0]["sig"], libc::SIGUSR2, "{}", failed[0]);
    // -k: the two calls, each with its return; nothing the kernel made.
    let calls = calls.json();
    // (The test stops the other tools with SIGINT: calls of its own too.)
    let mine: Vec<&Value> = calls
        .iter()
        .filter(|e| e["pid"] == me && (e["tpid"] == pid || e["tpid"] == gone))
        .collect();
    assert_eq!(mine.len(), 2, "{calls:#?}");
    assert_eq!(
        (&mine[0]["tpid"], &mine[0]["result"]),
        (&pid.into(), &0.into())
    );
    assert_eq!(
        (&mine[1]["tpid"], &mine[1]["result"]),
        (&gone.into(), &(-libc::ESRCH).into())
    );
    // Calls only (another process's tgkill() may show: a busy machine's).
    assert!(
        calls
            .iter()
            .all(|e| ["kill", "tkill", "tgkill"].contains(&e["source"].as_str().unwrap())),
        "{calls:#?}"
    );
    // BCC's text: TIME PID COMM SIG TPID RESULT.
    assert!(
        text.stdout[0].starts_with("TIME      PID"),
        "{:?}",
        text.stdout
    );
    let line = text
        .stdout
        .iter()
        .find(|l| l.split_whitespace().nth(4) == Some(&gone.to_string()))
        .unwrap_or_else(|| panic!("{:?}", text.stdout));
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cells[1], me.to_string(), "{line}");
    assert_eq!(cells[3..], ["12", &gone.to_string(), "-3"], "{line}");
}

#[test]
fn killsnoop_filters_by_sender_target_signal_and_failure() {
    let me = std::process::id().to_string();
    let mut target = sleeper();
    let tpid = target.id() as i32;
    let sender = start(&["--json", "-p", &me]);
    let by_target = start(&["--json", "-T", &tpid.to_string()]);
    let by_signal = start(&["--json", "-s", "SIGUSR2"]);
    let failures = start(&["--json", "-x", "-p", &me]);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(kill(tpid, libc::SIGCONT), 0);
    let gone = free_pid();
    assert_eq!(kill(gone, libc::SIGUSR2), -libc::ESRCH);
    let _ = target.kill();
    let _ = target.wait();
    let (sender, by_target, by_signal, failures) = (
        stop(sender),
        stop(by_target),
        stop(by_signal),
        stop(failures),
    );
    let sender = sender.json();
    assert!(sender
        .iter()
        .all(|e| e["pid"] == me.parse::<u32>().unwrap()));
    assert!(
        sender.iter().any(|e| e["sig"] == libc::SIGCONT),
        "{sender:#?}"
    );
    let by_target = by_target.json();
    // SIGCONT and the SIGKILL, both to it.
    let sigs: Vec<&Value> = by_target.iter().map(|e| &e["sig"]).collect();
    assert_eq!(sigs, [libc::SIGCONT, libc::SIGKILL], "{by_target:#?}");
    let by_signal = by_signal.json();
    assert_eq!(to(&by_signal, gone).len(), 1, "{by_signal:#?}");
    assert!(by_signal.iter().all(|e| e["sig"] == libc::SIGUSR2));
    // -x: the kill() that failed, and the SIGCONT the kernel ignored (a
    // running process's default for it), not the SIGKILL delivered.
    // (This process's other tests send signals meanwhile: its targets only.)
    let failures = failures.json();
    let seen: Vec<(&Value, &Value)> = failures
        .iter()
        .filter(|e| e["tpid"] == tpid || e["tpid"] == gone)
        .map(|e| (&e["sig"], &e["result"]))
        .collect();
    assert_eq!(
        seen,
        [
            (&libc::SIGCONT.into(), &1.into()),
            (&libc::SIGUSR2.into(), &(-libc::ESRCH).into())
        ],
        "{failures:#?}"
    );
}

/// Each variant: signal_generate as tp_btf, raw_tp or the classic
/// tracepoint, the calls' arguments from the registers or kept at entry.
#[test]
fn killsnoop_hook_variants() {
    for (disable, hooks) in [
        ("", &["tp_btf signal_generate", "sys_exit_kill"][..]),
        ("tp_btf", &["raw_tp signal_generate"][..]),
        (
            "tp_btf,raw_tp,task_pt_regs",
            &["tracepoint signal:signal_generate", "sys_enter_kill"][..],
        ),
    ] {
        let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
        assert!(dry.status.success(), "{dry:?}");
        let out = dry.stdout.join("\n");
        for hook in hooks {
            assert!(out.contains(hook), "{disable}: {hook}: {out}");
        }
        let tool = testkit::start_disabled(BIN, &["--json"], disable);
        let (pid, gone) = signals();
        let events = stop(tool).json();
        assert_eq!(
            to(&events, pid)
                .iter()
                .filter(|e| e["sig"] == libc::SIGUSR1)
                .count(),
            1,
            "{disable}: {events:#?}"
        );
        assert_eq!(to(&events, gone).len(), 1, "{disable}: {events:#?}");
    }
}

/// Under the name sigsnoop: libbpf-tools' columns; -n names the signal.
#[test]
fn killsnoop_as_sigsnoop_names_signals() {
    require_root();
    // The tool reads its name from argv[0]: a link named sigsnoop, in a
    // directory of this test's own.
    let sub = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("as-sigsnoop-{}", std::process::id()));
    std::fs::create_dir_all(&sub).unwrap();
    let sigsnoop = sub.join("sigsnoop");
    let _ = std::fs::remove_file(&sigsnoop);
    std::os::unix::fs::symlink(BIN, &sigsnoop).unwrap();
    let tool = Traced::start(sigsnoop.to_str().unwrap(), &["-n", "-k"]);
    let (_, gone) = signals();
    let f = stop(tool);
    let _ = std::fs::remove_dir_all(&sub);
    assert_eq!(
        f.stdout[0],
        "TIME     PID     COMM             SIG       TPID    RESULT"
    );
    let line = f
        .stdout
        .iter()
        .find(|l| l.split_whitespace().nth(4) == Some(&gone.to_string()))
        .unwrap_or_else(|| panic!("{:?}", f.stdout));
    assert_eq!(line.split_whitespace().nth(3), Some("SIGUSR2"), "{line}");
}
