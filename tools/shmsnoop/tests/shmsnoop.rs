//! shmsnoop against shared memory calls of the test's own: shmget() of a
//! private segment, shmat(), shmdt(), shmctl(IPC_RMID), and a shmat() of an
//! id that is not a segment (EINVAL): five calls, each seen once, in
//! order, with its arguments and result.

use std::time::Duration;

use serde_json::Value;
use testkit::{Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_shmsnoop");

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

/// What the calls returned: the segment's id and its address.
struct Made {
    id: i32,
    addr: u64,
}

/// The five calls, from this thread.
fn calls() -> Made {
    // SAFETY: a private segment this function makes, attaches, detaches
    // and removes; the last shmat names an id that is no segment.
    unsafe {
        let id = libc::shmget(libc::IPC_PRIVATE, 8192, libc::IPC_CREAT | 0o600);
        assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
        let p = libc::shmat(id, std::ptr::null(), libc::SHM_RDONLY);
        assert_ne!(p as isize, -1, "shmat: {}", std::io::Error::last_os_error());
        assert_eq!(libc::shmdt(p), 0);
        assert_eq!(libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()), 0);
        assert_eq!(libc::shmat(-1, std::ptr::null(), 0) as isize, -1);
        Made { id, addr: p as u64 }
    }
}

/// This thread's calls (the tests run side by side in one process).
fn mine(events: &[Value]) -> Vec<&Value> {
    // SAFETY: gettid has no arguments and cannot fail.
    let me = unsafe { libc::gettid() };
    events.iter().filter(|e| e["tid"] == me).collect()
}

/// Each call once, in order, with its arguments and result.
fn check(events: &[Value], made: &Made) {
    let seen = mine(events);
    let calls: Vec<&str> = seen.iter().map(|e| e["call"].as_str().unwrap()).collect();
    assert_eq!(
        calls,
        ["shmget", "shmat", "shmdt", "shmctl", "shmat"],
        "{seen:#?}"
    );
    let (get, at, dt, ctl, bad) = (seen[0], seen[1], seen[2], seen[3], seen[4]);
    assert_eq!(get["ret"], made.id, "{get}");
    assert_eq!(get["key"], 0, "{get}");
    assert_eq!(get["size"], 8192, "{get}");
    assert_eq!(get["shmflg"], libc::IPC_CREAT | 0o600, "{get}");
    assert_eq!(
        get["args"],
        format!("key: 0x0, size: 8192, shmflg: 0x380 (IPC_CREAT|0600)"),
        "{get}"
    );
    assert_eq!(at["ret"], made.addr as i64, "{at}");
    assert_eq!(at["shmid"], made.id, "{at}");
    assert_eq!(at["shmflg"], libc::SHM_RDONLY, "{at}");
    assert!(
        at["args"].as_str().unwrap().ends_with("(SHM_RDONLY)"),
        "{at}"
    );
    assert_eq!(dt["ret"], 0, "{dt}");
    assert_eq!(dt["shmaddr"], made.addr, "{dt}");
    assert_eq!(ctl["ret"], 0, "{ctl}");
    assert_eq!(ctl["shmid"], made.id, "{ctl}");
    // glibc may set IPC_64 in the command (0x100) on some architectures.
    assert_eq!(ctl["cmd"].as_u64().unwrap() & 0xff, 0, "{ctl}");
    assert_eq!(bad["ret"], -libc::EINVAL, "{bad}");
    assert_eq!(bad["error"], "EINVAL", "{bad}");
    for e in &seen {
        assert!(e["latency_ns"].as_u64().unwrap() > 0, "{e}");
        assert!(
            e.get("error").is_none() || e["ret"].as_i64().unwrap() < 0,
            "{e}"
        );
    }
}

#[test]
fn shmsnoop_shows_each_call_with_its_arguments_and_result() {
    let me = std::process::id().to_string();
    // SAFETY: gettid has no arguments and cannot fail.
    let tid = unsafe { libc::gettid() }.to_string();
    let json = start(&["--json", "-p", &me], "");
    let failed = start(&["--json", "-x", "-p", &me], "");
    let text = start(&["-T", "-t", &tid], "");
    let other = start(&["--json", "-n", "no-such-comm"], "");
    let made = calls();
    let (json, failed, text, other) = (stop(json), stop(failed), stop(text), stop(other));
    check(&json.json(), &made);
    // -x: the failed call alone; -n: nothing of a name no process has.
    let failed = failed.json();
    assert_eq!(mine(&failed).len(), 1, "{failed:#?}");
    assert_eq!(mine(&failed)[0]["error"], "EINVAL", "{failed:#?}");
    assert!(other.json().is_empty(), "{:?}", other.stdout);
    // -T and -t: BCC's layout, this thread's five lines.
    assert_eq!(
        text.stdout[0], "TIME(s)        TID    COMM                SYS              RET ARGs",
        "{:?}",
        text.stdout
    );
    let lines: Vec<Vec<&str>> = text.stdout[1..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines.len(), 5, "{:?}", text.stdout);
    let get = &lines[0];
    assert_eq!(get[0], "0.000000000", "{get:?}");
    assert_eq!(get[1], tid, "{get:?}");
    assert_eq!(get[3..5], ["SHMGET", &format!("{:x}", made.id)], "{get:?}");
    assert_eq!(lines[1][4], format!("{:x}", made.addr), "{:?}", lines[1]);
    assert_eq!(
        lines[3][3..8],
        [
            "SHMCTL",
            "0",
            "shmid:",
            &format!("0x{:x},", made.id),
            "cmd:"
        ]
    );
    assert_eq!(lines[4][3..5], ["SHMAT", "EINVAL"], "{:?}", lines[4]);
}

/// Each variant: the calls' own tracepoints; tp_btf sys_enter/sys_exit
/// where they are missing; the two side by side on one run of the calls.
#[test]
fn shmsnoop_hook_variants() {
    let me = std::process::id().to_string();
    let variants = [
        ("", "tracepoint syscalls:sys_enter_shmget"),
        ("tracepoint", "tp_btf sys_enter"),
    ];
    let tools: Vec<Traced> = variants
        .iter()
        .map(|(disable, _)| start(&["--json", "-v", "-p", &me], disable))
        .collect();
    let made = calls();
    for ((_, hook), tool) in variants.into_iter().zip(tools) {
        let done = stop(tool);
        assert!(done.stderr.contains(hook), "{hook}: {}", done.stderr);
        check(&done.json(), &made);
    }
}
