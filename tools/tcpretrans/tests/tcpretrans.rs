//! tcpretrans against real retransmits: a TCP transfer over the loopback of
//! a private network namespace, with an nftables rule that drops a share of
//! the data segments on the input hook.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::process::Command;
use std::thread;
use std::time::Duration;

use serde_json::Value;
use testbed::{Loss, Netns};
use testkit::{require_root, run, stop_and_check_unloaded, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcpretrans");

/// The test's network namespace (testbed::Netns, shared with the bench),
/// named uniquely.
fn netns() -> Netns {
    Netns::new(&unique("tr")).expect("creating a network namespace")
}

/// Sends 1 MB in 1000-byte writes to `addr` inside `ns` while `percent` of
/// the segments are dropped; returns the sender's local port. (Small: under
/// the VM suite's emulated CPUs a lossy megabyte takes seconds.)
fn lossy_transfer(ns: &Netns, addr: SocketAddr, percent: u32) -> u16 {
    sized_lossy_transfer(ns, addr, percent, 1000)
}

/// [`lossy_transfer`] of `writes` 1000-byte writes.
fn sized_lossy_transfer(ns: &Netns, addr: SocketAddr, percent: u32, writes: usize) -> u16 {
    let (mut client, mut server) = ns.connect(addr).expect("connecting in the namespace");
    client.set_nodelay(true).unwrap();
    let lport = client.local_addr().unwrap().port();
    ns.drop_segments(addr.port(), Loss::Percent(percent))
        .expect("adding the drop rule");
    let reader = thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        let mut total = 0;
        loop {
            match server.read(&mut buf) {
                Ok(0) | Err(_) => return total,
                Ok(n) => total += n,
            }
        }
    });
    let chunk = [b'x'; 1000];
    for _ in 0..writes {
        client.write_all(&chunk).unwrap();
    }
    ns.stop_dropping().expect("removing the drop rule");
    drop(client);
    assert_eq!(reader.join().unwrap(), writes * 1000);
    lport
}

fn v4(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

fn v6(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv6Addr::LOCALHOST, port))
}

fn start(args: &[&str]) -> Traced {
    require_root();
    Traced::start(BIN, args)
}

/// Events of the flow from local port `lport` to `port`.
fn flow_events(finished: &Finished, lport: u16, port: u16) -> Vec<Value> {
    finished
        .json()
        .into_iter()
        .filter(|e| e["lport"] == lport && e["dport"] == port)
        .collect()
}

#[test]
fn retransmits_show_addresses_ports_state_sequence_and_owner() {
    let ns = netns();
    let tool = start(&["-s"]);
    let lport = lossy_transfer(&ns, v4(5101), 20);
    thread::sleep(Duration::from_millis(300));
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");
    assert!(
        finished.stdout[0].starts_with("TIME     PID     IP LADDR:LPORT")
            && finished.stdout[0].ends_with("STATE        SEQ"),
        "header: {}",
        finished.stdout[0]
    );
    let local = format!("127.0.0.1:{lport}");
    let ours: Vec<&String> = finished
        .stdout
        .iter()
        .filter(|l| l.contains(&local))
        .collect();
    assert!(
        ours.len() >= 3,
        "too few retransmits seen for {local}:\n{}",
        finished.stdout.join("\n")
    );
    assert!(ours.iter().any(|l| l.contains(" ESTABLISHED ")));
    for line in ours {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 8, "{line}");
        assert_eq!(f[1], std::process::id().to_string(), "owner pid: {line}");
        assert_eq!(f[2], "4");
        assert_eq!(f[3], local);
        assert_eq!(f[4], "R>");
        assert_eq!(f[5], "127.0.0.1:5101");
        // Segments still in flight when the sender closes are resent in FIN_WAIT1.
        assert!(["ESTABLISHED", "FIN_WAIT1"].contains(&f[6]), "{line}");
        f[7].parse::<u32>().expect("a numeric sequence number");
    }
}

#[test]
fn family_filters_and_json_cover_ipv6() {
    let ns = netns();
    let six = start(&["--json", "-6"]);
    let four = start(&["--json", "-4"]);
    let lport4 = lossy_transfer(&ns, v4(5102), 20);
    let lport6 = lossy_transfer(&ns, v6(5102), 20);
    thread::sleep(Duration::from_millis(300));
    let six = six.stop();
    let four = four.stop();
    assert!(six.status.success() && four.status.success());

    let v6_events = flow_events(&six, lport6, 5102);
    assert!(
        !v6_events.is_empty(),
        "no IPv6 retransmits: {:?}",
        six.stdout
    );
    for e in &v6_events {
        assert_eq!(e["ip"], 6);
        assert_eq!(e["saddr"], "::1");
        assert_eq!(e["daddr"], "::1");
        assert_eq!(e["type"], "R");
        assert_eq!(e["kind"], "retransmit");
        assert_eq!(e["pid"], std::process::id());
        assert_eq!(e["owner_known"], true);
    }
    assert!(
        six.json().iter().all(|e| e["ip"] == 6),
        "-6 let IPv4 through"
    );
    assert!(
        !flow_events(&four, lport4, 5102).is_empty(),
        "no IPv4 retransmits: {:?}",
        four.stdout
    );
    assert!(
        four.json().iter().all(|e| e["ip"] == 4),
        "-4 let IPv6 through"
    );
}

#[test]
fn count_mode_counts_per_flow_at_exit() {
    let ns = netns();
    let counting = start(&["-c"]);
    let events = start(&["--json"]);
    let lport = lossy_transfer(&ns, v4(5103), 20);
    thread::sleep(Duration::from_millis(300));
    let counted = counting.stop();
    let streamed = events.stop();
    assert!(counted.status.success(), "{counted:?}");
    let header = counted
        .stdout
        .iter()
        .position(|l| l.starts_with("LADDR:LPORT"))
        .expect("a count table");
    let row = counted.stdout[header + 1..]
        .iter()
        .find(|l| l.starts_with(&format!("127.0.0.1:{lport} ")))
        .unwrap_or_else(|| panic!("no row for the flow: {:?}", counted.stdout));
    let f: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(f[1], "127.0.0.1:5103");
    let n: usize = f[2].parse().unwrap();
    // Both tools watched the same retransmits.
    assert_eq!(n, flow_events(&streamed, lport, 5103).len());
    assert!(n > 0);
}

#[test]
fn pid_filter_matches_the_socket_owner() {
    let ns = netns();
    let me = std::process::id().to_string();
    let mine = start(&["--json", "-p", &me]);
    let other = start(&["--json", "-p", "1"]);
    let lport = lossy_transfer(&ns, v4(5104), 20);
    thread::sleep(Duration::from_millis(300));
    let mine = mine.stop();
    let other = other.stop();
    assert!(
        !flow_events(&mine, lport, 5104).is_empty(),
        "{:?}",
        mine.stdout
    );
    assert!(
        flow_events(&other, lport, 5104).is_empty(),
        "{:?}",
        other.stdout
    );
}

#[test]
fn classic_tracepoint_fallback_sees_the_same_flows() {
    let ns = netns();
    require_root();
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "-v"])
            .env("BPFTOOLS_DISABLE", "tp_btf,raw_tp"),
    );
    let lport = lossy_transfer(&ns, v4(5105), 20);
    thread::sleep(Duration::from_millis(300));
    let finished = tool.stop();
    assert!(
        finished
            .stderr
            .contains("tracepoint tcp:tcp_retransmit_skb"),
        "{}",
        finished.stderr
    );
    let events = flow_events(&finished, lport, 5105);
    assert!(!events.is_empty(), "{:?}", finished.stdout);
    assert!(events.iter().all(|e| e["saddr"] == "127.0.0.1"));
}

#[test]
fn loss_probes_without_fentry_or_kprobes_are_an_error_unless_optional() {
    require_root();
    let strict = run(BIN, &["-l", "--dry-run"]);
    let optional = run(BIN, &["--lossprobe-if-available", "--dry-run"]);
    assert!(optional.status.success(), "{optional:?}");
    let neither = !common::kernel::probe::fentry_target(LOSS_PROBE_FN)
        && !common::kernel::probe::kprobe_target(LOSS_PROBE_FN);
    // Linux 6.18 here: fentry refused, no kprobes (see TOOLS.md).
    if !testkit::feature_present(neither, "a kernel without fentry and kprobes", None) {
        return;
    }
    assert_eq!(strict.status.code(), Some(1), "{strict:?}");
    assert!(
        strict.stderr.contains("-l needs fentry or a kprobe"),
        "{}",
        strict.stderr
    );
    assert!(
        optional.stderr.contains("tail loss probes are not traced"),
        "{}",
        optional.stderr
    );
}

const LOSS_PROBE_FN: &str = "tcp_send_loss_probe";

/// -l under loss, on `hook` (chosen with `disable` in BPFTOOLS_DISABLE):
/// the dry run names it, and tail loss probes of the flow show as `L`.
fn loss_probes_seen(disable: &str, hook: &str) {
    let dry = Command::new(BIN)
        .args(["-l", "--dry-run"])
        .env("BPFTOOLS_DISABLE", disable)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&dry.stdout);
    assert!(listing.contains(hook), "{hook}: {listing}");
    let ns = netns();
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["-l", "--json"])
            .env("BPFTOOLS_DISABLE", disable),
    );
    // Tail loss probes fire when the end of a flight goes unacknowledged:
    // a few transfers under heavy loss make sure some do.
    let mut lports = Vec::new();
    for port in 5111..5114 {
        lports.push((sized_lossy_transfer(&ns, v4(port), 30, 500), port));
    }
    thread::sleep(Duration::from_millis(300));
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");
    let events: Vec<Value> = lports
        .iter()
        .flat_map(|(lport, port)| flow_events(&finished, *lport, *port))
        .collect();
    assert!(events.iter().any(|e| e["type"] == "R"), "{events:?}");
    assert!(
        events.iter().any(|e| e["type"] == "L"),
        "no tail loss probe seen on {hook}: {events:?}"
    );
}

#[test]
fn loss_probes_are_traced_with_fentry() {
    require_root();
    let fentry = common::kernel::probe::fentry_target(LOSS_PROBE_FN);
    if testkit::feature_present(fentry, "fentry", None) {
        loss_probes_seen("", "fentry tcp_send_loss_probe");
    }
}

#[test]
fn loss_probes_are_traced_with_kprobes() {
    require_root();
    let kprobe = common::kernel::probe::kprobe_target(LOSS_PROBE_FN);
    if testkit::feature_present(kprobe, "kprobes", None) {
        loss_probes_seen("fentry", "kprobe tcp_send_loss_probe");
    }
}

#[test]
fn dry_runs_verify_every_variant() {
    require_root();
    for disable in ["", "tp_btf", "tp_btf,raw_tp"] {
        let out = Command::new(BIN)
            .args(["--dry-run", "--synack"])
            .env("BPFTOOLS_DISABLE", disable)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{disable}: {out:?}");
        assert!(stdout.contains("tcp_retransmit_synack"), "{stdout}");
    }
}

/// --prometheus (scraped by a real Prometheus) and --prom-file: the
/// retransmits of a lossy flow, by flow, are the events the tool printed.
#[test]
fn prometheus_counts_the_flows_retransmits() {
    use testkit::prometheus::{free_port, Prometheus};
    let ns = netns();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let file = std::env::temp_dir().join(format!("{}.prom", unique("tr-prom")));
    let tool = start(&[
        "--json",
        "--prometheus",
        &addr,
        "--prom-file",
        file.to_str().unwrap(),
    ]);
    let prometheus = Prometheus::start(&addr);
    let lport = lossy_transfer(&ns, v4(5105), 20);
    // Two scrapes after the transfer.
    thread::sleep(Duration::from_secs(3));
    let scraped = prometheus
        .query("sum(tcpretrans_flow_retransmits_total{dport=\"5105\",daddr=\"127.0.0.1\"})");
    drop(prometheus);
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");
    let printed = finished
        .json()
        .into_iter()
        .filter(|e| e["dport"] == 5105 && e["daddr"] == "127.0.0.1")
        .count();
    assert!(printed > 0 && flow_events(&finished, lport, 5105).len() <= printed);
    assert_eq!(scraped as usize, printed, "{:?}", finished.stdout);
    let text = std::fs::read_to_string(&file).unwrap();
    let _ = std::fs::remove_file(&file);
    let in_file: u64 = text
        .lines()
        .filter(|l| {
            l.starts_with("tcpretrans_flow_retransmits_total{")
                && l.contains("daddr=\"127.0.0.1\"")
                && l.contains("dport=\"5105\"")
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(in_file as usize, printed, "{text}");
}
