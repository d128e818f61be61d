//! cpudist against a workload of known shape: a process that runs 20 ms on
//! the CPU and then sleeps 20 ms, over and over.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_cpudist");
const ROUNDS: usize = 25;

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

/// cd-work, started and waiting for its go.
struct Work(Child);

impl Work {
    fn start() -> Work {
        let prog = testkit::build_c_program(
            env!("CARGO_MANIFEST_DIR"),
            env!("CARGO_TARGET_TMPDIR"),
            "cd-work",
        );
        // Real-time (SCHED_FIFO): no other task preempts its runs and
        // splits them, whatever else the machine does meanwhile.
        let child = testkit::spawn_ready(
            Command::new("chrt")
                .args(["-f", "1"])
                .arg(prog)
                .args([&ROUNDS.to_string(), "20", "20"])
                .stdin(Stdio::piped()),
        );
        Work(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Lets it run its rounds, and waits for its end.
    fn run(mut self) {
        self.0.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
        assert!(self.0.wait().unwrap().success());
    }
}

/// The JSON histogram's buckets (those with counts) as (low, count).
fn buckets(h: &Value) -> Vec<(u64, u64)> {
    h["buckets"]
        .as_array()
        .unwrap_or_else(|| panic!("{h}"))
        .iter()
        .map(|b| (b["low"].as_u64().unwrap(), b["count"].as_u64().unwrap()))
        .collect()
}

/// The histogram's peak is the 16–31 ms slot, where at least half the
/// workload's rounds fell (a run split by an interrupt or a preemption
/// counts as its pieces), and its total is the workload's: 20 ms a round,
/// every piece counted (each truncated to whole milliseconds).
fn peaks_at_20_ms(h: &Value) {
    let buckets = buckets(h);
    let peak = buckets
        .iter()
        .find(|(low, _)| *low == 16)
        .map_or(0, |(_, count)| *count);
    assert!(buckets.iter().all(|(_, c)| *c <= peak), "{h}");
    assert!(peak >= ROUNDS as u64 / 2, "{h}");
    let total = h["total"].as_u64().unwrap();
    let expected = ROUNDS as u64 * 20;
    assert!(
        total * 100 >= expected * 85 && total * 100 <= expected * 115,
        "{total} ms, not about {expected}: {h}"
    );
}

fn one_histogram(f: &Finished) -> Value {
    let hists = f.json();
    assert_eq!(hists.len(), 1, "{hists:#?}");
    hists[0].clone()
}

fn measured(args: &[&str], disable: &str) -> Value {
    let _serial = testkit::one_at_a_time();
    let work = Work::start();
    let p = work.pid().to_string();
    let mut all = vec!["--json", "-m", "-p", &p];
    all.extend_from_slice(args);
    let tool = start(&all, disable);
    work.run();
    one_histogram(&stop(tool))
}

#[test]
fn cpudist_on_cpu_time_peaks_at_the_runs_length() {
    peaks_at_20_ms(&measured(&[], ""));
}

#[test]
fn cpudist_off_cpu_time_peaks_at_the_sleeps_length() {
    peaks_at_20_ms(&measured(&["-O"], ""));
}

/// raw_tp, a hash map by thread, where tp_btf and task storage exist too.
#[test]
fn cpudist_raw_tp_variant() {
    require_root();
    peaks_at_20_ms(&measured(&[], "tp_btf"));
}

/// -P labels the process's histogram with its pid and command.
#[test]
fn cpudist_per_process_names_it() {
    let h = measured(&["-P", "-e"], "");
    assert_eq!(h["comm"], "cd-work", "{h}");
    peaks_at_20_ms(&h);
}

/// -c: a cgroup's tasks only (another's runs are not counted).
#[test]
fn cpudist_cgroup_filter() {
    let _serial = testkit::one_at_a_time();
    let docker = testkit::FakeContainer::docker();
    let inside = Work::start();
    let outside = Work::start();
    // The container's process moves itself in before its go.
    let procs = docker.dir.join("cgroup.procs");
    std::fs::write(&procs, inside.pid().to_string()).unwrap();
    let tool = start(
        &["--json", "-m", "-P", "--container", docker.short_id()],
        "",
    );
    let (a, b) = (inside.pid(), outside.pid());
    let t = std::thread::spawn(move || outside.run());
    inside.run();
    t.join().unwrap();
    let hists = stop(tool).json();
    assert_eq!(hists.len(), 1, "{hists:#?}");
    assert_eq!(hists[0]["pid"], a, "{hists:#?} (outside: {b})");
    peaks_at_20_ms(&hists[0]);
}

#[test]
fn cpudist_dry_run_names_the_switch() {
    require_root();
    let dry = testkit::run(BIN, &["--dry-run"]);
    assert!(dry.status.success(), "{dry:?}");
    assert!(dry.stdout.join("\n").contains("sched_switch"), "{dry:?}");
}
