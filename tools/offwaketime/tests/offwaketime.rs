//! offwaketime against two processes that wake each other through pipes
//! (testkit::pingpong): each one's wait in its read, joined with the other's
//! write that ended it, for the time the processes measured.

use std::time::Duration;

use testkit::pingpong::{Blocked, PingPong, A_WAITS, A_WAKES_B, B_WAITS, B_WAKES_A};
use testkit::{require_root, stop_and_check_unloaded, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_offwaketime");
const TMP: &str = env!("CARGO_TARGET_TMPDIR");
/// 80 rounds of 25 ms: 2 s.
const ROUNDS: u32 = 80;

/// Runs the ping-pong under offwaketime (`args`, and -p with both pids).
fn trace(pp: &mut PingPong, args: &[&str], env: &[(&str, &str)]) -> (Finished, Blocked) {
    pp.trace(BIN, args, env)
}

/// A folded line split at its `--`: the blocked side (name first) and the
/// waker's (name last), and the value.
struct Joined<'a> {
    target: Vec<&'a str>,
    waker: Vec<&'a str>,
    us: u64,
}

fn joined(finished: &Finished) -> Vec<Joined<'_>> {
    finished
        .stdout
        .iter()
        .filter_map(|l| {
            let (stack, value) = l.rsplit_once(' ')?;
            let frames: Vec<&str> = stack.split(';').collect();
            let at = frames.iter().position(|f| *f == "--")?;
            Some(Joined {
                target: frames[..at].to_vec(),
                waker: frames[at + 1..].to_vec(),
                us: value.parse().ok()?,
            })
        })
        .collect()
}

/// The time `target` (a name) spent blocked in `waits`, woken by `waker`
/// from `wakes`, over every folded line.
fn total(lines: &[Joined], target: &str, waits: &str, waker: &str, wakes: &str) -> u64 {
    lines
        .iter()
        .filter(|j| j.target.first() == Some(&target) && j.target.contains(&waits))
        .filter(|j| j.waker.last() == Some(&waker) && j.waker.contains(&wakes))
        .map(|j| j.us)
        .sum()
}

/// Each way: all the time the process spent off CPU in its read (blocked,
/// or preempted on the way in: then with no waker) within 10% of what it
/// measured, and at least 80% of it joined with the other's write (the
/// rest: preemptions, which a TCG guest makes long).
fn assert_both_ways(finished: &Finished, blocked: Blocked) {
    let lines = joined(finished);
    let off_cpu = |target: &str, waits: &str| -> u64 {
        lines
            .iter()
            .filter(|j| j.target.first() == Some(&target) && j.target.contains(&waits))
            .map(|j| j.us)
            .sum()
    };
    let ways = [
        ("pp-b", B_WAITS, "pp-a", A_WAKES_B, blocked.b_us),
        ("pp-a", A_WAITS, "pp-b", B_WAKES_A, blocked.a_us),
    ];
    for (who, waits, waker, wakes, measured) in ways {
        let all = off_cpu(who, waits);
        let woken = total(&lines, who, waits, waker, wakes);
        let off = all.abs_diff(measured) as f64 / measured as f64;
        assert!(
            off <= 0.10 && woken as f64 >= 0.8 * measured as f64,
            "{who} off CPU {all} us as traced ({woken} us woken by {waker}), {measured} us as it \
             measured: {:#?}",
            finished.stdout
        );
    }
}

#[test]
fn ping_pong_joins_each_wait_with_the_write_that_ended_it() {
    let mut pp = PingPong::start(TMP, ROUNDS, true);
    let (finished, blocked) = trace(&mut pp, &["-f"], &[]);
    assert_both_ways(&finished, blocked);
    let lines = joined(&finished);
    let j = lines
        .iter()
        .filter(|j| j.target.first() == Some(&"pp-b") && j.target.contains(&B_WAITS))
        .max_by_key(|j| j.us)
        .expect("b's wait");
    // The blocked side root first: main, the waiting function, then the
    // kernel's read down to the switch; the waker's leaf first: the
    // wakeup, the kernel's write, then its user stack up to main.
    let at = |side: &[&str], f: &str| side.iter().position(|x| *x == f);
    assert!(
        at(&j.target, "main") < at(&j.target, B_WAITS),
        "{:?}",
        j.target
    );
    assert!(
        at(&j.target, B_WAITS) < at(&j.target, "vfs_read"),
        "{:?}",
        j.target
    );
    assert!(
        at(&j.waker, "vfs_write") < at(&j.waker, A_WAKES_B),
        "{:?}",
        j.waker
    );
    assert!(
        at(&j.waker, A_WAKES_B) < at(&j.waker, "main"),
        "{:?}",
        j.waker
    );
    assert!(
        !j.target
            .iter()
            .chain(&j.waker)
            .any(|f| f.starts_with("bpf_")),
        "the BPF programs' own frames are trimmed: {:?} -- {:?}",
        j.target,
        j.waker
    );
    // Only the two processes are followed.
    assert!(finished
        .stdout
        .iter()
        .all(|l| l.starts_with("pp-a;") || l.starts_with("pp-b;")));
}

/// Waits of microseconds, woken from the other CPU at once: each still
/// joined with its waker. (A wakeup that comes while the sleeper's
/// switch-out is still under way is kept too, but this cannot force one.)
#[test]
fn microsecond_waits_are_joined_with_their_waker() {
    let mut pp = PingPong::start_with(TMP, 20_000, true, true);
    let (finished, _) = trace(&mut pp, &["-f"], &[]);
    let lines = joined(&finished);
    let waits = |waker: Option<&str>| -> u64 {
        lines
            .iter()
            .filter(|j| j.target.first() == Some(&"pp-b") && j.target.contains(&B_WAITS))
            .filter(|j| waker.is_none_or(|w| j.waker.last() == Some(&w)))
            .map(|j| j.us)
            .sum()
    };
    let (all, by_a) = (waits(None), waits(Some("pp-a")));
    // The rest: b preempted in its read (no waker), rare.
    assert!(
        all > 0 && by_a as f64 >= 0.95 * all as f64,
        "{by_a} of {all} us joined with pp-a: {:#?}",
        finished.stdout
    );
}

#[test]
fn multi_line_output_is_bccs_waker_then_target() {
    let mut pp = PingPong::start(TMP, 40, true);
    let (finished, _) = trace(&mut pp, &[], &[]);
    assert!(
        finished.stdout[0].starts_with("Tracing blocked time (us) of PID"),
        "{:?}",
        finished.stdout
    );
    let out = finished.stdout.join("\n");
    // The entry of b's wait woken by a: the waker's line, its stack root
    // first, the separator, b's stack leaf first, b's line, the value.
    let waker = format!("    waker:           pp-a {}", pp.a);
    let target = format!("    target:          pp-b {}", pp.b);
    let entry = out
        .split("\n\n")
        .map(|e| e.trim_start_matches('\n'))
        .find(|e| e.starts_with(&waker) && e.contains(&target) && e.contains(B_WAITS))
        .unwrap_or_else(|| panic!("no entry of b waiting in {B_WAITS}, woken by a: {out}"));
    let lines: Vec<&str> = entry.lines().collect();
    assert_eq!(
        lines[0],
        format!("    waker:           pp-a {}", pp.a),
        "{entry}"
    );
    let at = |l: &str| {
        lines
            .iter()
            .position(|x| x.trim() == l)
            .unwrap_or(usize::MAX)
    };
    assert!(at("main") < at(A_WAKES_B), "{entry}");
    assert!(at(A_WAKES_B) < at("vfs_write"), "{entry}");
    assert!(at("vfs_write") < at("--               --"), "{entry}");
    assert!(at("--               --") < at("vfs_read"), "{entry}");
    let target_at = lines.iter().position(|l| *l == target).unwrap();
    assert!(at(B_WAITS) < target_at, "{entry}");
    let value: u64 = lines[target_at + 1].trim().parse().unwrap();
    assert!(value > 0, "{entry}");
}

#[test]
fn json_names_the_waker_and_halves_follow_u_and_k() {
    let mut pp = PingPong::start(TMP, 40, true);
    let (finished, _) = trace(&mut pp, &["--json", "-U"], &[]);
    let names = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect()
    };
    let entries = finished.json();
    // b's waits that a woke (not a preemption on the way in, which has no
    // waker: more of them where other tests keep the CPUs busy meanwhile).
    let e = entries
        .iter()
        .find(|e| {
            e["comm"] == "pp-b"
                && !e["waker"].is_null()
                && names(&e["user_stack"]).iter().any(|f| f == B_WAITS)
        })
        .unwrap_or_else(|| panic!("{entries:#?}"));
    assert_eq!(e["pid"], pp.b, "{e}");
    assert_eq!(e["tid"], pp.b, "{e}");
    assert_eq!(e["kernel_stack"], serde_json::json!([]), "-U: {e}");
    let w = &e["waker"];
    assert_eq!(w["comm"], "pp-a", "{e}");
    assert_eq!(w["pid"], pp.a, "{e}");
    assert!(
        names(&w["user_stack"]).iter().any(|f| f == A_WAKES_B),
        "{e}"
    );
    assert_eq!(w["kernel_stack"], serde_json::json!([]), "-U: {e}");
    assert!(e["us"].as_u64().unwrap() > 0, "{e}");

    let mut pp = PingPong::start(TMP, 20, true);
    let (finished, _) = trace(&mut pp, &["--json", "-K"], &[]);
    let entries = finished.json();
    assert!(!entries.is_empty(), "{finished:?}");
    for e in entries {
        assert_eq!(e["user_stack"], serde_json::json!([]), "-K: {e}");
        if !e["waker"].is_null() {
            assert_eq!(e["waker"]["user_stack"], serde_json::json!([]), "-K: {e}");
        }
    }
}

#[test]
fn raw_tp_fallback_joins_the_same_stacks() {
    let mut pp = PingPong::start(TMP, ROUNDS, true);
    let (finished, blocked) = trace(&mut pp, &["-f", "-v"], &[("BPFTOOLS_DISABLE", "tp_btf")]);
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
fn svg_and_pprof_carry_the_joined_stacks() {
    use common::export::pprof::decode;
    let mut pp = PingPong::start(TMP, 40, true);
    let dir = testkit::scratch_dir(TMP);
    let svg = dir.join(format!("ow-{}.svg", pp.a));
    let prof = dir.join(format!("ow-{}.pb.gz", pp.a));
    let (finished, _) = trace(
        &mut pp,
        &[
            "--svg",
            svg.to_str().unwrap(),
            "--pprof",
            prof.to_str().unwrap(),
        ],
        &[],
    );
    let text = std::fs::read_to_string(&svg).expect("the SVG file");
    std::fs::remove_file(&svg).unwrap();
    assert!(
        text.contains("<svg") && text.contains(A_WAKES_B),
        "{finished:?}"
    );
    let profile = decode(&std::fs::read(&prof).unwrap()).unwrap();
    std::fs::remove_file(&prof).unwrap();
    let s = |i: i64| profile.string_table[i as usize].as_str();
    // A location's innermost function (none for an address unnamed).
    let function = |loc: u64| {
        let l = &profile.location[loc as usize - 1];
        l.line.first().map_or("", |line| {
            s(profile.function[line.function_id as usize - 1].name)
        })
    };
    // A sample of b's wait: the waker's frames (leaf of the sample: its
    // root), the `--` frame, then b's stack from its leaf.
    let sample = profile
        .sample
        .iter()
        .find(|x| {
            x.label
                .iter()
                .any(|l| s(l.key) == "waker_comm" && s(l.str) == "pp-a")
                && x.location_id.iter().any(|l| function(*l) == B_WAITS)
        })
        .expect("a sample of b woken by a");
    let chain: Vec<&str> = sample.location_id.iter().map(|l| function(*l)).collect();
    let at = |f: &str| chain.iter().position(|x| *x == f).unwrap_or(usize::MAX);
    assert!(at("main") < at(A_WAKES_B), "{chain:?}");
    assert!(at(A_WAKES_B) < at("--"), "{chain:?}");
    assert!(at("--") < at(B_WAITS), "{chain:?}");
}

#[test]
fn a_missing_process_is_an_error() {
    require_root();
    let out = testkit::run(BIN, &["-p", "999999999", "1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        out.stderr.contains("there is no process 999999999"),
        "{}",
        out.stderr
    );
}

#[test]
fn ctrl_c_without_a_filter_reports_and_unloads() {
    require_root();
    let tool = Traced::start(BIN, &["-f"]);
    std::thread::sleep(Duration::from_millis(1500));
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");
    assert!(!joined(&finished).is_empty(), "{finished:?}");
}

/// `--containers`: each joined stack is rooted at the blocked task's
/// container; `--container` keeps only the waits of the tasks in it (b's,
/// still joined with their waker outside it).
#[test]
fn containers_root_each_wait_at_the_blocked_tasks_container() {
    require_root();
    let docker = testkit::FakeContainer::docker();
    let mut pp = PingPong::start(TMP, 40, true);
    std::fs::write(docker.dir.join("cgroup.procs"), pp.b.to_string()).unwrap();
    let (all, _) = trace(&mut pp, &["-f", "--containers"], &[]);
    let root = format!("[{}];pp-b;", docker.short_id());
    assert!(
        all.stdout
            .iter()
            .any(|l| l.starts_with(&root) && l.contains(A_WAKES_B)),
        "{:?}",
        all.stdout
    );
    assert!(
        all.stdout
            .iter()
            .filter(|l| l.contains(";pp-b;"))
            .all(|l| l.starts_with(&root)),
        "{:?}",
        all.stdout
    );
    let mut pp = PingPong::start(TMP, 40, true);
    std::fs::write(docker.dir.join("cgroup.procs"), pp.b.to_string()).unwrap();
    let (only, _) = trace(&mut pp, &["-f", "--container", docker.short_id()], &[]);
    assert!(!only.stdout.is_empty(), "{only:?}");
    assert!(
        only.stdout.iter().all(|l| l.starts_with("pp-b;")),
        "{:?}",
        only.stdout
    );
    // Woken by a, outside the container.
    assert!(
        only.stdout.iter().any(|l| {
            let stack = l.rsplit_once(' ').unwrap().0;
            stack.contains(A_WAKES_B) && stack.ends_with(";pp-a")
        }),
        "{:?}",
        only.stdout
    );
}
