//! softirqs against a loopback TCP transfer of the test's own, which runs
//! NET_RX softirqs by the hundred: what the tool counts is what the
//! kernel's own /proc/softirqs counted over the same time, at most.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_softirqs");

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(100))
}

/// 32 MB through a loopback TCP connection.
fn transfer() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let mut got = 0;
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            got += n;
        }
        got
    });
    let mut c = TcpStream::connect(addr).unwrap();
    let chunk = vec![7u8; 1 << 16];
    for _ in 0..512 {
        c.write_all(&chunk).unwrap();
    }
    drop(c);
    assert_eq!(server.join().unwrap(), 32 << 20);
}

/// /proc/softirqs' row for `name` (`NET_RX`): its count on each CPU.
fn proc_softirqs(name: &str) -> Vec<u64> {
    let text = std::fs::read_to_string("/proc/softirqs").unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no {name} in /proc/softirqs"));
    line.split_whitespace()
        .skip(1)
        .map(|n| n.parse().unwrap())
        .collect()
}

fn section<'a>(sections: &'a [Value], name: &str) -> &'a Value {
    sections
        .iter()
        .find(|s| s["softirq"] == name)
        .unwrap_or_else(|| panic!("no {name}: {sections:#?}"))
}

fn transfer_seen(disable: &str) {
    let before = proc_softirqs("NET_RX");
    let timed = start(&["--json"], disable);
    let counted = start(&["--json", "-C"], disable);
    let cpu0 = start(&["--json", "-C", "-c", "0"], disable);
    let text = start(&[], disable);
    transfer();
    let (timed, counted, cpu0, text) = (stop(timed), stop(counted), stop(cpu0), stop(text));
    let after = proc_softirqs("NET_RX");
    let ran: u64 = after.iter().zip(&before).map(|(a, b)| a - b).sum();
    let on_cpu0 = after[0] - before[0];
    // Counts: every NET_RX run the tools saw, the kernel counted too.
    let counted = counted.json();
    let n = section(&counted, "net_rx")["count"].as_u64().unwrap();
    assert!(
        n >= 10 && n <= ran,
        "{n} runs seen, {ran} counted by the kernel"
    );
    let cpu0 = cpu0.json();
    let n0 = cpu0
        .iter()
        .find(|s| s["softirq"] == "net_rx")
        .map_or(0, |s| s["count"].as_u64().unwrap());
    assert!(
        n0 <= on_cpu0,
        "{n0} on CPU 0, {on_cpu0} counted by the kernel"
    );
    assert!(n0 <= n, "{n0} on CPU 0 of {n}");
    // Time: each run timed, the total in microseconds.
    let timed = timed.json();
    let rx = section(&timed, "net_rx");
    assert!(rx["count"].as_u64().unwrap() >= 10, "{rx}");
    assert!(rx["total"].as_u64().unwrap() > 0, "{rx}");
    assert_eq!(rx["vec"], 3, "{rx}");
    // BCC's table: SOFTIRQ TOTAL_usecs, then a row per kind.
    let at = text
        .stdout
        .iter()
        .position(|l| l.starts_with("SOFTIRQ"))
        .unwrap_or_else(|| panic!("{:?}", text.stdout));
    assert_eq!(text.stdout[at], "SOFTIRQ          TOTAL_usecs");
    assert!(
        text.stdout[at + 1..]
            .iter()
            .any(|l| l.starts_with("net_rx ")),
        "{:?}",
        text.stdout
    );
}

#[test]
fn softirqs_counts_and_times_a_transfers_net_rx() {
    let _serial = testkit::one_at_a_time();
    transfer_seen("");
}

/// raw_tp and the classic tracepoints, where tp_btf exists too.
#[test]
fn softirqs_raw_tp_variant() {
    require_root();
    let _serial = testkit::one_at_a_time();
    transfer_seen("tp_btf");
}

#[test]
fn softirqs_classic_tracepoint_variant() {
    require_root();
    let _serial = testkit::one_at_a_time();
    transfer_seen("tp_btf,raw_tp");
}

/// -d: a histogram per kind, titled as BCC titles them.
#[test]
fn softirqs_dist_titles_each_kind() {
    let _serial = testkit::one_at_a_time();
    let tool = start(&["-d", "-N"], "");
    transfer();
    let f = stop(tool);
    assert!(
        f.stdout.iter().any(|l| l == "softirq = net_rx"),
        "{:?}",
        f.stdout
    );
    assert!(
        f.stdout.iter().any(|l| l.trim_start().starts_with("nsecs")),
        "{:?}",
        f.stdout
    );
}
