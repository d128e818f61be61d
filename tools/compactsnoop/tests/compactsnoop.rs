//! compactsnoop against compaction of the test's own: a shell writing 1 to
//! /proc/sys/vm/compact_memory compacts every zone of every node itself,
//! synchronously, as a whole (order -1).

use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_compactsnoop");

/// The tool (`args`, then `-p PID`, hooks in `disable` off) while a shell
/// of the test's own compacts memory; the shell's pid.
fn trace(args: &[&str], disable: &str) -> (testkit::Finished, u32) {
    testkit::require_root();
    testkit::trace_pid(
        Command::new("sh").args(["-c", "kill -STOP $$; echo 1 > /proc/sys/vm/compact_memory"]),
        BIN,
        args,
        disable,
        |_| {},
    )
}

/// The zones /proc/zoneinfo lists with pages: each compacted once.
fn populated_zones() -> usize {
    let text = std::fs::read_to_string("/proc/zoneinfo").unwrap();
    let mut zones = 0;
    let mut in_zone = false;
    for line in text.lines() {
        if line.starts_with("Node ") {
            in_zone = true;
        } else if in_zone {
            if let Some(n) = line.trim().strip_prefix("present") {
                in_zone = false;
                if n.trim().parse::<u64>().unwrap_or(0) > 0 {
                    zones += 1;
                }
            }
        }
    }
    zones
}

fn check(events: &[Value], pid: u32) {
    assert_eq!(events.len(), populated_zones(), "{events:?}");
    // Zones by node: a machine with two nodes (the VM guests) has a
    // DMA32 zone on each.
    let mut zones: Vec<(i64, &str)> = Vec::new();
    for e in events {
        assert_eq!(e["pid"], pid, "{e}");
        assert_eq!(e["comm"], "sh", "{e}");
        assert_eq!(e["order"], -1, "{e}");
        assert_eq!(e["mode"], "SYNC", "{e}");
        assert!(e["latency_ns"].as_u64().unwrap() > 0, "{e}");
        assert!(e["node"].as_i64().unwrap() >= 0, "{e}");
        let zone = e["zone"].as_str().unwrap();
        assert!(zone.starts_with("ZONE_"), "{e}");
        zones.push((e["node"].as_i64().unwrap(), zone));
        // A whole zone is scanned to its end, or stopped once it is
        // compact enough (as named by the running kernel).
        let status = e["status"].as_str().unwrap();
        assert!(
            status.chars().all(|c| c.is_ascii_lowercase() || c == '_') && !status.is_empty(),
            "{e}"
        );
    }
    zones.sort();
    zones.dedup();
    assert_eq!(zones.len(), events.len(), "each zone once: {events:?}");
}

#[test]
fn compactsnoop_shows_a_manual_compaction_of_every_zone() {
    let (f, pid) = trace(&["--json"], "");
    check(&f.json(), pid);
}

/// BCC's text, -T and -e (whole zones: no check, so no watermarks), and
/// -K's kernel stack under each line, from the write to compact_memory.
#[test]
fn compactsnoop_prints_bccs_layout_with_stacks() {
    let (f, pid) = trace(&["-T", "-e", "-K"], "");
    assert!(
        f.stdout[0].starts_with(
            "TIME(s)        COMM           PID    NODE ZONE         ORDER MODE    FRAGIDX"
        ),
        "{f:?}"
    );
    let rows: Vec<&String> = f.stdout[1..]
        .iter()
        .filter(|l| !l.is_empty() && !l.starts_with('\t'))
        .collect();
    assert_eq!(rows.len(), populated_zones(), "{f:?}");
    for r in rows {
        let cells: Vec<&str> = r.split_whitespace().collect();
        assert_eq!(cells[1..3], ["sh", &pid.to_string()], "{r}");
        assert_eq!(cells[5..8], ["-1", "SYNC", "-"], "{r}");
    }
    let stack: Vec<&String> = f.stdout.iter().filter(|l| l.starts_with('\t')).collect();
    assert!(
        stack.iter().any(|l| l.contains("compact")),
        "no compaction frame: {f:?}"
    );
}

/// The suitability check's hook as tp_btf or raw_tp: the same.
#[test]
fn compactsnoop_hook_variants() {
    for (disable, hook) in [
        ("", "tp_btf mm_compaction_suitable"),
        ("tp_btf", "raw_tp mm_compaction_suitable"),
    ] {
        let (f, pid) = trace(&["--json", "-v"], disable);
        assert!(f.stderr.contains(hook), "{hook}: {}", f.stderr);
        check(&f.json(), pid);
    }
}
