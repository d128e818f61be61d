//! tcpconnect against real connects: a client making an exact number of
//! connections to a server in a network namespace of the test's own, in
//! each mode the kernel offers (fexit, kprobes, the state change).

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::thread;
use std::time::Duration;

use serde_json::Value;
use testbed::Netns;
use testkit::{require_root, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcpconnect");

fn netns() -> Netns {
    Netns::new(&unique("tc")).expect("creating a network namespace")
}

/// `n` connections from this process to `addr` in `ns`, each accepted and
/// closed; returns the clients' local ports.
fn connects(ns: &Netns, addr: SocketAddr, n: usize) -> Vec<u16> {
    let name = ns.name().to_string();
    thread::spawn(move || {
        Netns::enter(&name).unwrap();
        let listener = TcpListener::bind(addr).unwrap();
        (0..n)
            .map(|_| {
                let client = TcpStream::connect(addr).unwrap();
                drop(listener.accept().unwrap());
                client.local_addr().unwrap().port()
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
        .filter(|e| e["dport"] == port)
        .cloned()
        .collect()
}

/// 5 IPv4 and 3 IPv6 connects: exactly those lines, the client's pid,
/// comm and uid, the addresses, and the local ports the kernel picked
/// (with -L); -c counts them.
fn each_connect(disable: &str, hook: &str, base: u16) {
    let dry = testkit::run_with_env(BIN, &["--dry-run", "-L"], &[("BPFTOOLS_DISABLE", disable)]);
    assert!(
        dry.stdout.join("\n").contains(hook),
        "{hook}: {:?}",
        dry.stdout
    );
    let ns = netns();
    let tool = traced(&["--json", "-L"], disable);
    let counting = traced(&["-c"], disable);
    let four = connects(&ns, SocketAddr::from((Ipv4Addr::LOCALHOST, base)), 5);
    let six = connects(&ns, SocketAddr::from((Ipv6Addr::LOCALHOST, base + 1)), 3);
    let (tool, counting) = (stop(tool), stop(counting));
    let events = tool.json();
    let me = std::process::id();
    for (lports, port, family, addr) in [(&four, base, 4, "127.0.0.1"), (&six, base + 1, 6, "::1")]
    {
        let seen = to_port(&events, port);
        assert_eq!(seen.len(), lports.len(), "{hook}: {seen:#?}");
        for (e, lport) in seen.iter().zip(lports.iter()) {
            assert_eq!(e["pid"], me, "{e}");
            assert_eq!(e["uid"], 0, "{e}");
            assert_eq!(e["ip"], family, "{e}");
            assert_eq!(e["saddr"], addr, "{e}");
            assert_eq!(e["daddr"], addr, "{e}");
            assert_eq!(e["lport"], *lport, "{e}");
        }
    }
    let count = |addr: &str, port: u16| {
        counting
            .stdout
            .iter()
            .find(|l| {
                l.split_whitespace()
                    .take(3)
                    .eq([addr, addr, &*port.to_string()])
            })
            .unwrap_or_else(|| panic!("{:?}", counting.stdout))
            .split_whitespace()
            .nth(3)
            .unwrap()
            .to_string()
    };
    assert_eq!(count("127.0.0.1", base), "5");
    assert_eq!(count("::1", base + 1), "3");
}

#[test]
fn tcpconnect_shows_each_connect() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let (hook, disable) = if common::kernel::probe::fentry_target("tcp_v4_connect") {
        ("fexit tcp_v4_connect", "")
    } else if common::kernel::probe::kprobe_target("tcp_v4_connect") {
        ("kprobe tcp_v4_connect", "")
    } else {
        ("inet_sock_set_state", "")
    };
    each_connect(disable, hook, 5601);
}

#[test]
fn tcpconnect_state_mode() {
    let _turn = testkit::one_at_a_time();
    each_connect("tcp_v4_connect", "tp_btf inet_sock_set_state", 5603);
}

#[test]
fn tcpconnect_classic_tracepoint_mode() {
    let _turn = testkit::one_at_a_time();
    each_connect(
        "tcp_v4_connect,tp_btf,raw_tp",
        "tracepoint sock:inet_sock_set_state",
        5605,
    );
}

#[test]
fn tcpconnect_kprobe_mode() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let kprobes = common::kernel::probe::kprobe_target("tcp_v4_connect");
    if testkit::feature_present(kprobes, "kprobes", None) {
        each_connect("fentry", "kprobe tcp_v4_connect", 5607);
    }
}

#[test]
fn tcpconnect_text_columns_and_filters() {
    let _turn = testkit::one_at_a_time();
    let ns = netns();
    let text = traced(&["-tU"], "");
    let port = traced(&["--json", "-P", "5610,5612"], "");
    let uid = traced(&["--json", "-u", "1"], "");
    let pid = traced(&["--json", "-p", "1"], "");
    connects(&ns, SocketAddr::from((Ipv4Addr::LOCALHOST, 5610)), 2);
    connects(&ns, SocketAddr::from((Ipv4Addr::LOCALHOST, 5611)), 2);
    let (text, port, uid, pid) = (stop(text), stop(port), stop(uid), stop(pid));
    assert_eq!(
        text.stdout[0].split_whitespace().collect::<Vec<_>>(),
        ["TIME(s)", "UID", "PID", "COMM", "IP", "SADDR", "DADDR", "DPORT"]
    );
    let rows: Vec<Vec<&str>> = text.stdout[1..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .filter(|r: &Vec<&str>| r.last() == Some(&"5610"))
        .collect();
    assert_eq!(rows.len(), 2, "{:?}", text.stdout);
    for r in rows {
        assert_eq!(r.len(), 8, "{r:?}");
        r[0].parse::<f64>().unwrap();
        assert_eq!(
            (r[1], r[2], r[4], r[5], r[6]),
            (
                "0",
                &*std::process::id().to_string(),
                "4",
                "127.0.0.1",
                "127.0.0.1"
            )
        );
    }
    let ports: Vec<u64> = port
        .json()
        .iter()
        .map(|e| e["dport"].as_u64().unwrap())
        .collect();
    assert_eq!(ports, [5610, 5610]);
    assert!(to_port(&uid.json(), 5610).is_empty());
    assert!(to_port(&pid.json(), 5610).is_empty());
}

#[test]
fn tcpconnect_dns_is_refused_clearly() {
    let out = testkit::run(BIN, &["-d"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        out.stderr.contains("-d (DNS names) is not supported"),
        "{}",
        out.stderr
    );
}

#[test]
fn tcpconnect_dry_runs() {
    require_root();
    for disable in [
        "",
        "fentry",
        "tcp_v4_connect",
        "tcp_v4_connect,tp_btf",
        "tcp_v4_connect,tp_btf,raw_tp",
    ] {
        for args in [
            &["--dry-run"][..],
            &["--dry-run", "-L"],
            &["--dry-run", "-c"],
        ] {
            let out = testkit::run_with_env(BIN, args, &[("BPFTOOLS_DISABLE", disable)]);
            assert!(out.status.success(), "{disable} {args:?}: {out:?}");
        }
    }
}

#[test]
fn tcpconnect_names_each_connects_container() {
    use std::os::unix::fs::MetadataExt;
    let (docker, pod) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::kubernetes(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let tool = traced(&["--containers", "--json", "-P", &port.to_string()], "");
    let client = format!("import socket; socket.create_connection(('127.0.0.1', {port})).close()");
    for who in [&docker, &pod] {
        let mut cmd = Command::new("python3");
        cmd.args(["-c", &client]);
        assert!(who.adopt(&mut cmd).status().unwrap().success());
    }
    let events = stop(tool).json();
    let seen = to_port(&events, port);
    assert_eq!(seen.len(), 2, "{events:?}");
    for (e, who) in seen.iter().zip([&docker, &pod]) {
        assert_eq!(e["container"], who.short_id(), "{e}");
        assert_eq!(e["pod"].as_str(), who.pod.as_deref(), "{e}");
        assert_eq!(
            e["cgroup_id"],
            std::fs::metadata(&who.dir).unwrap().ino(),
            "{e}"
        );
    }
    drop(listener);
}
