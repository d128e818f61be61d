//! wakeuptime against two processes that wake each other through pipes
//! (testkit::pingpong): each one's time asleep, charged to the other's
//! write that woke it, for the time the processes measured.

use testkit::pingpong::{Blocked, PingPong, A_WAKES_B, B_WAKES_A};
use testkit::Finished;

const BIN: &str = env!("CARGO_BIN_EXE_wakeuptime");
const TMP: &str = env!("CARGO_TARGET_TMPDIR");
/// 80 rounds of 25 ms: 2 s.
const ROUNDS: u32 = 80;

/// Runs the ping-pong under wakeuptime (`args`, and -p with both pids).
fn trace(pp: &mut PingPong, args: &[&str], env: &[(&str, &str)]) -> (Finished, Blocked) {
    pp.trace(BIN, args, env)
}

/// The time `target` spent asleep before wakeups by `waker` from `wakes`,
/// over every folded line (`waker;frames root first;target value`).
fn total(finished: &Finished, waker: &str, wakes: &str, target: &str) -> u64 {
    finished
        .stdout
        .iter()
        .filter_map(|l| {
            let (stack, value) = l.rsplit_once(' ')?;
            let frames: Vec<&str> = stack.split(';').collect();
            (frames.first() == Some(&waker)
                && frames.last() == Some(&target)
                && frames.contains(&wakes))
            .then(|| value.parse::<u64>().unwrap())
        })
        .sum()
}

/// Each way: between 80% and 110% of what the process measured asleep (a
/// wait without the run queue wait after its wakeup, which wakeuptime
/// leaves out). The time from the read's start to the switch-out is in the
/// measure but is no sleep: a preemption there (long in a TCG guest) is
/// left out too. On this machine both agree within 2%.
fn assert_both_ways(finished: &Finished, blocked: Blocked) {
    let b = total(finished, "pp-a", A_WAKES_B, "pp-b");
    let a = total(finished, "pp-b", B_WAKES_A, "pp-a");
    let measured = [
        ("pp-b", b, blocked.b_asleep_us),
        ("pp-a", a, blocked.a_asleep_us),
    ];
    for (who, seen, measured) in measured {
        let ratio = seen as f64 / measured as f64;
        assert!(
            (0.8..=1.1).contains(&ratio),
            "{who} asleep {seen} us as traced, {measured} us as it measured: {:#?}",
            finished.stdout
        );
    }
}

#[test]
fn ping_pong_charges_each_sleep_to_the_write_that_ended_it() {
    let mut pp = PingPong::start(TMP, ROUNDS, true);
    let (finished, blocked) = trace(&mut pp, &["-f"], &[]);
    assert_both_ways(&finished, blocked);
    // The write's wakeup of pp-b (a timer interrupt in that write can
    // wake pp-a itself: a line of its own, ending in pp-a).
    let line = finished
        .stdout
        .iter()
        .find(|l| {
            l.starts_with("pp-a;")
                && l.contains(A_WAKES_B)
                && l.rsplit_once(' ')
                    .is_some_and(|(s, _)| s.ends_with(";pp-b"))
        })
        .unwrap();
    // Root first: the waker's main, its function, the kernel's write, the
    // wakeup; then the process woken.
    let frames: Vec<&str> = line.rsplit_once(' ').unwrap().0.split(';').collect();
    let at = |f: &str| frames.iter().position(|x| *x == f).unwrap_or(usize::MAX);
    assert!(at("main") < at(A_WAKES_B), "{line}");
    assert!(at(A_WAKES_B) < at("vfs_write"), "{line}");
    assert!(at("vfs_write") < at("try_to_wake_up"), "{line}");
    assert!(!frames.iter().any(|f| f.starts_with("bpf_")), "{line}");
}

#[test]
fn multi_line_output_is_bccs_with_addresses() {
    let mut pp = PingPong::start(TMP, 40, true);
    // -v: BCC's raw addresses.
    let (finished, _) = trace(&mut pp, &["-K", "-v"], &[]);
    assert_eq!(
        finished.stdout[0],
        "Tracing blocked time (us) of PID ".to_string()
            + &pp.pids()
            + " by kernel waker stack... Hit Ctrl-C to end."
    );
    let out = finished.stdout.join("\n");
    let entry = out
        .split("\n\n")
        .find(|e| e.contains("    target:          pp-b") && e.contains("vfs_write"))
        .unwrap_or_else(|| panic!("no entry of b woken by a's write: {out}"));
    let lines: Vec<&str> = entry.trim_start_matches('\n').lines().collect();
    assert_eq!(
        lines[0],
        format!("    target:          pp-b {}", pp.b),
        "{entry}"
    );
    // Each frame: its address, then its symbol; leaf first.
    let frame = lines[1].trim();
    let (addr, sym) = frame.split_once(' ').unwrap();
    assert!(
        u64::from_str_radix(addr, 16).is_ok_and(|a| a > 0xffff_0000_0000_0000),
        "{entry}"
    );
    assert_eq!(sym.trim(), "try_to_wake_up", "{entry}");
    let waker = format!("    waker:           pp-a {}", pp.a);
    let waker_at = lines.iter().position(|l| *l == waker).expect(entry);
    assert!(
        lines[waker_at + 1].trim().parse::<u64>().unwrap() > 0,
        "{entry}"
    );
}

#[test]
fn json_and_user_stacks() {
    let mut pp = PingPong::start(TMP, 40, true);
    let (finished, _) = trace(&mut pp, &["--json", "-U"], &[]);
    let entries = finished.json();
    // b's waits ended by a (not b's naps, ended by a timer interrupt in
    // whichever task was running: it is named as the waker).
    let e = entries
        .iter()
        .find(|e| e["comm"] == "pp-b" && e["waker"]["pid"] == pp.a)
        .unwrap_or_else(|| panic!("{entries:#?}"));
    assert_eq!(e["pid"], pp.b, "{e}");
    assert_eq!(e["waker"]["pid"], pp.a, "{e}");
    let user: Vec<&str> = e["waker"]["user_stack"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert!(user.contains(&A_WAKES_B), "{e}");
    assert_eq!(e["waker"]["kernel_stack"], serde_json::json!([]), "-U: {e}");
    assert!(
        e.get("kernel_stack").is_none(),
        "no stacks of the woken: {e}"
    );
}

#[test]
fn raw_tp_fallback_sees_the_same_wakeups() {
    let mut pp = PingPong::start(TMP, ROUNDS, true);
    let (finished, blocked) = trace(
        &mut pp,
        &["-f", "--verbose"],
        &[("BPFTOOLS_DISABLE", "tp_btf")],
    );
    assert!(
        finished.stderr.contains("raw_tp sched_waking"),
        "{}",
        finished.stderr
    );
    assert_both_ways(&finished, blocked);
}

#[test]
fn dwarf_unwinding_names_the_waker_without_frame_pointers() {
    let mut pp = PingPong::start(TMP, ROUNDS, false);
    let (finished, blocked) = trace(&mut pp, &["-f", "--unwind", "dwarf"], &[]);
    assert_both_ways(&finished, blocked);
}

#[test]
fn min_block_time_drops_the_short_sleeps() {
    // a's waits are 5 ms, b's 20 ms: -m 15 ms keeps b's only (a timer
    // late by 10 ms in a loaded guest too).
    let mut pp = PingPong::start(TMP, 40, true);
    let (finished, _) = trace(&mut pp, &["-f", "-m", "15000"], &[]);
    assert!(
        total(&finished, "pp-a", A_WAKES_B, "pp-b") > 0,
        "{finished:?}"
    );
    assert_eq!(
        total(&finished, "pp-b", B_WAKES_A, "pp-a"),
        0,
        "{finished:?}"
    );
}
