//! tcpconnlat against real connects over the loopback of a network
//! namespace of the test's own; an nftables rule drops a first SYN, so
//! that a connect takes the SYN's retransmission timeout (one second).

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::process::Command;

use std::time::{Duration, Instant};

use serde_json::Value;
use testbed::Netns;
use testkit::{require_root, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcpconnlat");

fn netns() -> Netns {
    Netns::new(&unique("cl")).expect("creating a network namespace")
}

/// Connects to `addr` in `ns`; returns the client's local port and how
/// long connect() took.
fn connect(ns: &Netns, addr: SocketAddr) -> (u16, Duration) {
    let start = Instant::now();
    let (client, _server) = ns.connect(addr).expect("connecting in the namespace");
    (client.local_addr().unwrap().port(), start.elapsed())
}

fn start(args: &[&str]) -> Traced {
    require_root();
    Traced::start(BIN, args)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(300))
}

fn find(events: &[Value], lport: u16, port: u16) -> Option<Value> {
    events
        .iter()
        .find(|e| e["lport"] == lport && e["dport"] == port)
        .cloned()
}

/// A connect whose first SYN is dropped takes ~1 s and shows so; an
/// undelayed one far less; -m 500 keeps only the slow one.
fn slow_and_fast(addr: SocketAddr, slow_port: u16, extra: &[&str]) {
    let ns = netns();
    ns.drop_first_syn(slow_port).unwrap();
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let all = start(&args);
    args.extend(["-m", "500"]);
    let slow_only = start(&args);
    let fast_addr = SocketAddr::new(addr.ip(), slow_port + 50);
    let (fast, _) = connect(&ns, fast_addr);
    let slow_addr = SocketAddr::new(addr.ip(), slow_port);
    let (slow, took) = connect(&ns, slow_addr);
    assert!(
        took >= Duration::from_millis(900),
        "the SYN was not dropped: {took:?}"
    );
    let (all, slow_only) = (stop(all), stop(slow_only));
    let events = all.json();
    let me = std::process::id();
    let s = find(&events, slow, slow_port).unwrap_or_else(|| {
        panic!(
            "no event for the slow connect from port {slow} (took {took:?}): {events:#?}\n{}",
            all.stderr
        )
    });
    let ms = s["latency_ms"].as_f64().unwrap();
    assert!((900.0..1100.0).contains(&ms), "{s}");
    assert_eq!(s["pid"], me);
    let family = if addr.is_ipv4() { 4 } else { 6 };
    assert_eq!(s["ip"], family);
    assert_eq!(s["daddr"], addr.ip().to_string());
    let f = find(&events, fast, slow_port + 50).unwrap_or_else(|| panic!("{events:#?}"));
    // Far below the retransmission's second (tens of ms under emulation).
    assert!(f["latency_ms"].as_f64().unwrap() < 100.0, "{f}");
    let kept = slow_only.json();
    assert!(find(&kept, slow, slow_port).is_some(), "{kept:?}");
    assert!(find(&kept, fast, slow_port + 50).is_none(), "{kept:?}");
}

#[test]
fn tcpconnlat_times_a_retransmitted_syn() {
    slow_and_fast(SocketAddr::from((Ipv4Addr::LOCALHOST, 5501)), 5501, &[]);
}

#[test]
fn tcpconnlat_ipv6() {
    slow_and_fast(SocketAddr::from((Ipv6Addr::LOCALHOST, 5502)), 5502, &["-6"]);
}

#[test]
fn tcpconnlat_classic_tracepoint_fallback() {
    require_root();
    let ns = netns();
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "-v"])
            .env("BPFTOOLS_DISABLE", "tp_btf,raw_tp"),
    );
    let (lport, _) = connect(&ns, SocketAddr::from((Ipv4Addr::LOCALHOST, 5503)));
    let finished = stop(tool);
    assert!(
        finished
            .stderr
            .contains("tracepoint sock:inet_sock_set_state"),
        "{}",
        finished.stderr
    );
    assert!(
        find(&finished.json(), lport, 5503).is_some(),
        "{:?}",
        finished.stdout
    );
}

#[test]
fn tcpconnlat_text_columns_pid_and_family_filters() {
    let ns = netns();
    let text = start(&["-tL", "0"]);
    let other = start(&["--json", "-p", "1"]);
    let six = start(&["--json", "-6"]);
    let (lport, _) = connect(&ns, SocketAddr::from((Ipv4Addr::LOCALHOST, 5504)));
    let (text, other, six) = (stop(text), stop(other), stop(six));
    assert_eq!(
        text.stdout[0].split_whitespace().collect::<Vec<_>>(),
        ["TIME(s)", "PID", "COMM", "IP", "SADDR", "LPORT", "DADDR", "DPORT", "LAT(ms)"]
    );
    let row = text
        .stdout
        .iter()
        .find(|l| l.contains(&format!(" {lport} ")))
        .unwrap_or_else(|| panic!("{:?}", text.stdout));
    let f: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(f.len(), 9, "{row}");
    assert_eq!(f[1], std::process::id().to_string());
    assert_eq!(
        (f[3], f[4], f[6], f[7]),
        ("4", "127.0.0.1", "127.0.0.1", "5504")
    );
    assert!(f[8].parse::<f64>().unwrap() < 100.0);
    assert!(find(&other.json(), lport, 5504).is_none());
    assert!(find(&six.json(), lport, 5504).is_none());
}

#[test]
fn tcpconnlat_dry_runs() {
    require_root();
    for (disable, hook) in [
        ("", "tp_btf inet_sock_set_state"),
        ("tp_btf", "raw_tp inet_sock_set_state"),
        ("tp_btf,raw_tp", "tracepoint sock:inet_sock_set_state"),
    ] {
        let out = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
        assert!(out.status.success(), "{disable}: {out:?}");
        assert!(
            out.stdout.join("\n").contains(hook),
            "{disable}: {:?}",
            out.stdout
        );
    }
}
