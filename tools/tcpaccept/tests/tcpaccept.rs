//! tcpaccept against real accepts: a server thread of this test accepting
//! an exact number of connections, made by another process (bash's
//! /dev/tcp), in a network namespace of the test's own; in each mode the
//! kernel offers (fexit, kretprobe, the system calls).

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::process::Command;
use std::thread;
use std::time::Duration;

use serde_json::Value;
use testbed::Netns;
use testkit::{require_root, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcpaccept");

fn netns() -> Netns {
    Netns::new(&unique("ta")).expect("creating a network namespace")
}

/// `n` connections to `addr` in `ns`, each from a bash of its own and
/// accepted by a thread of this process; returns the clients' ports.
fn accepts(ns: &Netns, addr: SocketAddr, n: usize) -> Vec<u16> {
    let name = ns.name().to_string();
    thread::spawn(move || {
        Netns::enter(&name).unwrap();
        let listener = TcpListener::bind(addr).unwrap();
        let host = match addr {
            SocketAddr::V4(a) => a.ip().to_string(),
            SocketAddr::V6(a) => a.ip().to_string(),
        };
        (0..n)
            .map(|_| {
                // The thread is in the namespace: so is the bash it starts.
                let status = Command::new("bash")
                    .args(["-c", &format!("exec 3<>/dev/tcp/{host}/{}", addr.port())])
                    .status()
                    .unwrap();
                assert!(status.success());
                let (_, peer) = listener.accept().unwrap();
                peer.port()
            })
            .collect()
    })
    .join()
    .unwrap()
}

fn traced(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(300))
}

fn to_port(events: &[Value], port: u16) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["lport"] == port)
        .cloned()
        .collect()
}

/// 4 IPv4 and 2 IPv6 accepts: exactly those lines, this process (the
/// server), the clients' ports.
fn each_accept(disable: &str, hook: &str, base: u16) {
    let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
    assert!(
        dry.stdout.join("\n").contains(hook),
        "{hook}: {:?}",
        dry.stdout
    );
    let ns = netns();
    let tool = traced(&["--json"], disable);
    let four = accepts(&ns, SocketAddr::from((Ipv4Addr::LOCALHOST, base)), 4);
    let six = accepts(&ns, SocketAddr::from((Ipv6Addr::LOCALHOST, base + 1)), 2);
    let tool = stop(tool);
    let events = tool.json();
    for (ports, port, family, addr) in [(&four, base, 4, "127.0.0.1"), (&six, base + 1, 6, "::1")] {
        let seen = to_port(&events, port);
        assert_eq!(seen.len(), ports.len(), "{hook}: {seen:#?}");
        for (e, rport) in seen.iter().zip(ports.iter()) {
            assert_eq!(e["pid"], std::process::id(), "{e}");
            assert_eq!(e["ip"], family, "{e}");
            assert_eq!(e["saddr"], addr, "{e}");
            assert_eq!(e["daddr"], addr, "{e}");
            assert_eq!(e["dport"], *rport, "{e}");
        }
    }
}

#[test]
fn tcpaccept_names_the_accepting_process() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let hook = if common::kernel::probe::fentry_target("inet_csk_accept") {
        "fexit inet_csk_accept"
    } else if common::kernel::probe::kprobe_target("inet_csk_accept") {
        "kretprobe inet_csk_accept"
    } else {
        "syscalls:sys_exit_accept4"
    };
    each_accept("", hook, 5701);
}

#[test]
fn tcpaccept_system_call_mode() {
    let _turn = testkit::one_at_a_time();
    each_accept("inet_csk_accept", "syscalls:sys_exit_accept4", 5703);
}

#[test]
fn tcpaccept_kretprobe_mode() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let kprobes = common::kernel::probe::kprobe_target("inet_csk_accept");
    if testkit::feature_present(kprobes, "kprobes", None) {
        each_accept("fentry", "kretprobe inet_csk_accept", 5705);
    }
}

#[test]
fn tcpaccept_text_columns_and_filters() {
    let _turn = testkit::one_at_a_time();
    let ns = netns();
    let text = traced(&["-Tt"], "");
    let port = traced(&["--json", "-P", "5710"], "");
    let pid = traced(&["--json", "-p", "1"], "");
    let four = traced(&["--json", "-4"], "");
    let ports = accepts(&ns, SocketAddr::from((Ipv4Addr::LOCALHOST, 5710)), 2);
    accepts(&ns, SocketAddr::from((Ipv6Addr::LOCALHOST, 5711)), 1);
    let (text, port, pid, four) = (stop(text), stop(port), stop(pid), stop(four));
    assert_eq!(
        text.stdout[0].split_whitespace().collect::<Vec<_>>(),
        ["TIME", "TIME(s)", "PID", "COMM", "IP", "RADDR", "RPORT", "LADDR", "LPORT"]
    );
    let rows: Vec<Vec<&str>> = text.stdout[1..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .filter(|r: &Vec<&str>| r.last() == Some(&"5710"))
        .collect();
    assert_eq!(rows.len(), 2, "{:?}", text.stdout);
    for (r, rport) in rows.iter().zip(&ports) {
        assert_eq!(r.len(), 9, "{r:?}");
        assert_eq!(r[0].len(), 8);
        r[1].parse::<f64>().unwrap();
        assert_eq!(r[2], std::process::id().to_string());
        assert_eq!(
            (r[4], r[5], r[6], r[7]),
            ("4", "127.0.0.1", &*rport.to_string(), "127.0.0.1")
        );
    }
    let lports: Vec<u64> = port
        .json()
        .iter()
        .map(|e| e["lport"].as_u64().unwrap())
        .collect();
    assert_eq!(lports, [5710, 5710]);
    assert!(to_port(&pid.json(), 5710).is_empty());
    assert!(to_port(&four.json(), 5711).is_empty());
    assert_eq!(to_port(&four.json(), 5710).len(), 2);
}
