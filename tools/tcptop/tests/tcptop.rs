//! tcptop against a transfer of known size over the loopback of a network
//! namespace of the test's own: its bytes each way, exactly, per end.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::process::Command;
use std::thread;
use std::time::Duration;

use serde_json::Value;
use testbed::Netns;
use testkit::{require_root, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcptop");

fn netns() -> Netns {
    Netns::new(&unique("tt")).expect("creating a network namespace")
}

/// The client sends `sent` bytes to `addr` in `ns`, the server answers
/// `answered`; returns the client's local port.
fn transfer(ns: &Netns, addr: SocketAddr, sent: usize, answered: usize) -> u16 {
    let (mut client, mut server) = ns.connect(addr).expect("connecting in the namespace");
    let lport = client.local_addr().unwrap().port();
    let peer = thread::spawn(move || {
        let mut got = vec![0u8; sent];
        server.read_exact(&mut got).unwrap();
        server.write_all(&vec![b'y'; answered]).unwrap();
    });
    client.write_all(&vec![b'x'; sent]).unwrap();
    let mut got = vec![0u8; answered];
    client.read_exact(&mut got).unwrap();
    peer.join().unwrap();
    lport
}

fn traced(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(300))
}

/// A connection's bytes over every interval: (rx, tx).
fn totals(rows: &[Value], lport: u16, dport: u16) -> (u64, u64) {
    rows.iter()
        .filter(|r| r["lport"] == lport && r["dport"] == dport)
        .fold((0, 0), |(rx, tx), r| {
            assert_eq!(r["pid"], std::process::id(), "{r}");
            (
                rx + r["rx_bytes"].as_u64().unwrap(),
                tx + r["tx_bytes"].as_u64().unwrap(),
            )
        })
}

fn counts_a_transfer(disable: &str, hook: &str, port: u16) {
    let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
    assert!(
        dry.stdout.join("\n").contains(hook),
        "{hook}: {:?}",
        dry.stdout
    );
    let ns = netns();
    let tool = traced(&["--json", "1"], disable);
    let (sent, answered) = (3_000_000, 200_000);
    let lport = transfer(
        &ns,
        SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        sent,
        answered,
    );
    let lport6 = transfer(
        &ns,
        SocketAddr::from((Ipv6Addr::LOCALHOST, port)),
        10_000,
        5_000,
    );
    let rows = stop(tool).json();
    assert_eq!(
        totals(&rows, lport, port),
        (answered as u64, sent as u64),
        "{hook}"
    );
    assert_eq!(
        totals(&rows, port, lport),
        (sent as u64, answered as u64),
        "{hook}"
    );
    assert_eq!(totals(&rows, lport6, port), (5_000, 10_000), "{hook}");
    let client = rows.iter().find(|r| r["lport"] == lport).unwrap();
    assert_eq!(
        (client["ip"].as_u64(), client["tx_kb"].as_u64()),
        (Some(4), Some(2929))
    );
}

#[test]
fn tcptop_counts_a_transfer() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let hook = if common::kernel::probe::btf_tracepoint_exists("sock_send_length") {
        "tp_btf sock_send_length"
    } else if common::kernel::probe::fentry_target("tcp_sendmsg") {
        "fexit tcp_sendmsg"
    } else {
        "kprobe tcp_sendmsg"
    };
    counts_a_transfer("", hook, 5901);
}

/// fexit and kprobes, where the kernel offers them beside the tracepoints.
#[test]
fn tcptop_function_modes() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let no_tp = "sock_send_length";
    if testkit::feature_present(
        common::kernel::probe::fentry_target("tcp_sendmsg"),
        "fentry",
        None,
    ) {
        counts_a_transfer(no_tp, "fexit tcp_sendmsg", 5902);
    }
    if testkit::feature_present(
        common::kernel::probe::kprobe_target("tcp_sendmsg"),
        "kprobes",
        None,
    ) {
        counts_a_transfer(&format!("{no_tp},fentry"), "kprobe tcp_sendmsg", 5903);
    }
}

/// `--containers`: a connection's row names the container of the process
/// that sent and received, in the text and in JSON; `--container` keeps
/// its rows only.
#[test]
fn tcptop_names_and_filters_each_rows_container() {
    use std::os::unix::fs::MetadataExt;
    let _turn = testkit::one_at_a_time();
    let docker = testkit::FakeContainer::docker();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = thread::spawn(move || {
        for _ in 0..2 {
            let (mut s, _) = listener.accept().unwrap();
            let mut got = Vec::new();
            s.read_to_end(&mut got).unwrap();
        }
    });
    let p = port.to_string();
    let json = traced(&["--json", "--containers", "-C", "5"], "");
    let text = traced(&["--containers", "-C", "5"], "");
    let only = traced(&["--json", "--container", docker.short_id(), "-C", "5"], "");
    let client = format!(
        "import socket\n\
         s = socket.create_connection(('127.0.0.1', {p}))\n\
         print(s.getsockname()[1], flush=True)\n\
         s.sendall(b'x' * 3000)\n"
    );
    let mut cmd = Command::new("python3");
    cmd.args(["-c", &client]);
    let out = docker.adopt(&mut cmd).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let inside: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let mut host = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    host.write_all(&[7u8; 500]).unwrap();
    drop(host);
    server.join().unwrap();
    let (json, text, only) = (stop(json), stop(text), stop(only));
    let rows = json.json();
    let theirs: Vec<&Value> = rows.iter().filter(|r| r["lport"] == inside).collect();
    assert!(!theirs.is_empty(), "{rows:#?}");
    let sent: u64 = theirs.iter().map(|r| r["tx_bytes"].as_u64().unwrap()).sum();
    assert_eq!(sent, 3000, "{theirs:#?}");
    for r in &theirs {
        assert_eq!(r["container"], docker.short_id(), "{r}");
        assert_eq!(
            r["cgroup_id"],
            std::fs::metadata(&docker.dir).unwrap().ino()
        );
    }
    let laddr = format!("127.0.0.1:{inside}");
    let row = text
        .stdout
        .iter()
        .find(|l| l.split_whitespace().nth(3) == Some(laddr.as_str()));
    assert!(
        row.is_some_and(|l| l.starts_with(docker.short_id())),
        "{:?}",
        text.stdout
    );
    assert!(
        text.stdout
            .iter()
            .any(|l| l.starts_with("CONTAINER    PID")),
        "{:?}",
        text.stdout
    );
    // The host's client and the server's ends are not the container's.
    let only = only.json();
    assert!(!only.is_empty(), "{rows:#?}");
    assert!(only.iter().all(|r| r["lport"] == inside), "{only:#?}");
}

/// The text screen: the summary line, BCC's tables (IPv6's after IPv4's),
/// the transfer on top; -S drops the summary; -p another process shows
/// nothing of it.
#[test]
fn tcptop_text_tables_and_filters() {
    let _turn = testkit::one_at_a_time();
    let ns = netns();
    let text = traced(&["-C", "5"], "");
    let quiet = traced(&["-C", "-S", "5"], "");
    let other = traced(&["--json", "-p", "1", "5"], "");
    let lport = transfer(
        &ns,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 5904)),
        1_048_576,
        1024,
    );
    transfer(
        &ns,
        SocketAddr::from((Ipv6Addr::LOCALHOST, 5904)),
        2048,
        1024,
    );
    let (text, quiet, other) = (stop(text), stop(quiet), stop(other));
    let lines = &text.stdout;
    let summary = lines
        .iter()
        .position(|l| l.contains(" loadavg: "))
        .unwrap_or_else(|| panic!("{lines:?}"));
    let header = lines
        .iter()
        .position(|l| l.starts_with("PID     COMM         LADDR "))
        .unwrap();
    assert!(header > summary);
    // Other tests' transfers may share the interval: the client's row.
    let client = format!("127.0.0.1:{lport}");
    let ours = lines[header + 1..]
        .iter()
        .find(|l| l.split_whitespace().nth(2) == Some(client.as_str()))
        .unwrap_or_else(|| panic!("{lines:?}"));
    let row: Vec<&str> = ours.split_whitespace().collect();
    assert_eq!(row[0], std::process::id().to_string());
    assert_eq!(
        row[2..],
        [
            &*format!("127.0.0.1:{lport}"),
            "127.0.0.1:5904",
            "1",
            "1024"
        ]
    );
    let six = lines
        .iter()
        .position(|l| l.starts_with("PID     COMM         LADDR6"))
        .unwrap();
    assert!(six > header + 1 && lines[six - 1].is_empty(), "{lines:?}");
    assert!(
        lines[six + 1..].iter().any(|l| l.contains("[::1]:5904")),
        "{lines:?}"
    );
    assert!(!quiet.stdout.iter().any(|l| l.contains("loadavg")));
    assert!(quiet.stdout.iter().any(|l| l.contains("127.0.0.1:5904")));
    assert!(!other
        .json()
        .iter()
        .any(|r| r["dport"] == 5904 || r["lport"] == 5904));
}
