//! softirqslower against loopback traffic of the test's own (udp-blast.c):
//! 200 UDP datagrams sent to itself on CPU 0, each raising NET_RX there,
//! run as the send re-enables bottom halves, in the sender. With a 1 µs
//! threshold, some of those runs are shown, in the sender, on CPU 0.

use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_softirqslower");

/// The tool (`args`, hooks in `disable` off) system-wide while the
/// blaster runs on CPU 0; the blaster's pid.
fn trace(args: &[&str], disable: &str) -> (testkit::Finished, u32) {
    testkit::require_root();
    let prog = testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "udp-blast",
    );
    let mut pid = 0;
    let f = testkit::trace_stopped(Command::new(&prog).args(["200", "0"]), |p| {
        pid = p;
        let mut tool = Command::new(BIN);
        tool.args(args).env("BPFTOOLS_DISABLE", disable);
        tool
    });
    (f, pid)
}

/// The blaster's net_rx runs, on its CPU; every event over the threshold.
fn check(events: &[Value], pid: u32) {
    let mine: Vec<&Value> = events
        .iter()
        .filter(|e| e["pid"] == pid && e["softirq"] == "net_rx" && e["stage"] == "runtime")
        .collect();
    assert!(!mine.is_empty(), "no net_rx run in the sender: {events:?}");
    for e in &mine {
        assert_eq!(e["comm"], "udp-blast", "{e}");
        assert_eq!(e["cpu"], 0, "{e}");
        assert_eq!(e["vec"], 3, "{e}");
    }
    for e in events {
        assert!(e["latency_ns"].as_u64().unwrap() >= 1000, "{e}");
        assert!(
            ["runtime", "raise_to_entry"].contains(&e["stage"].as_str().unwrap()),
            "{e}"
        );
    }
}

#[test]
fn softirqslower_shows_the_senders_net_rx_runs() {
    let (f, pid) = trace(&["--json", "1"], "");
    check(&f.json(), pid);
}

/// libbpf-tools' text; -c keeps one CPU's softirqs.
#[test]
fn softirqslower_text_on_one_cpu() {
    let (f, _) = trace(&["-c", "0", "1"], "");
    assert_eq!(
        f.stdout[0].trim_end(),
        "TIME     STAGE                SOFTIRQ  LAT(us)        CPU    COMM",
        "{f:?}"
    );
    let rows: Vec<&String> = f.stdout[1..].iter().collect();
    assert!(
        rows.iter().any(|l| l.contains(" softirq runtime ")
            && l.contains(" net_rx ")
            && l.trim_end().ends_with("udp-blast")),
        "{f:?}"
    );
    for l in rows {
        // TIME, the stage's words, SOFTIRQ, LAT(us), CPU, COMM.
        let cells: Vec<&str> = l.split_whitespace().collect();
        let cpu = if l.contains(" to softirq ") {
            cells[6]
        } else {
            cells[5]
        };
        assert_eq!(cpu, "0", "{l}");
    }
}

/// Each form of the tracepoints (raw_tp, the classic one) sees the same.
#[test]
fn softirqslower_hook_variants() {
    for (disable, hook) in [
        ("tp_btf", "raw_tp softirq_entry"),
        ("tp_btf,raw_tp", "tracepoint irq:softirq_entry"),
    ] {
        let (f, pid) = trace(&["--json", "-v", "1"], disable);
        assert!(f.stderr.contains(hook), "{hook}: {}", f.stderr);
        check(&f.json(), pid);
    }
}
