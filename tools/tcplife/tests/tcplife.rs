//! tcplife against real sessions over the loopback of a network namespace
//! of the test's own: bytes each way, span, owner, filters.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr};
use std::process::Command;
use std::thread;
use std::time::Duration;

use serde_json::Value;
use testbed::Netns;
use testkit::{require_root, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcplife");

fn netns() -> Netns {
    Netns::new(&unique("tl")).expect("creating a network namespace")
}

/// A session to `addr` in `ns`: the client sends `sent` bytes, the server
/// `received`; it stays open `hold`, then the client ends it first. Both
/// end it with shutdown(): a close() is only the last one when no process
/// forked meanwhile holds the descriptor (the harness spawns tools from
/// other threads; such a child closes it at exec, and the change that names
/// the server's owner would rightly be the child's). Returns the client's
/// local port.
fn session(ns: &Netns, addr: SocketAddr, sent: usize, received: usize, hold: Duration) -> u16 {
    let (mut client, mut server) = ns.connect(addr).expect("connecting in the namespace");
    let lport = client.local_addr().unwrap().port();
    let reader = thread::spawn(move || {
        let mut got = vec![0u8; sent];
        server.read_exact(&mut got).unwrap();
        server.write_all(&vec![b'y'; received]).unwrap();
        let mut rest = Vec::new();
        server.read_to_end(&mut rest).unwrap();
        assert!(rest.is_empty());
        server.shutdown(Shutdown::Write).unwrap();
        server
    });
    client.write_all(&vec![b'x'; sent]).unwrap();
    let mut got = vec![0u8; received];
    client.read_exact(&mut got).unwrap();
    thread::sleep(hold);
    client.shutdown(Shutdown::Write).unwrap();
    let server = reader.join().unwrap();
    // The server's FIN has reached the client once it reads the end.
    assert_eq!(client.read(&mut [0u8; 8]).unwrap(), 0);
    drop((client, server));
    lport
}

fn start(args: &[&str]) -> Traced {
    require_root();
    Traced::start(BIN, args)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(300))
}

/// The client's and the server's rows of the session from `lport` to `port`.
fn rows(events: &[Value], lport: u16, port: u16) -> (Value, Value) {
    let find = |l: u16, d: u16| {
        events
            .iter()
            .find(|e| e["lport"] == l && e["dport"] == d)
            .cloned()
            .unwrap_or_else(|| panic!("no session {l} -> {d} in {events:#?}"))
    };
    (find(lport, port), find(port, lport))
}

fn check(finished: &Finished, lport: u16, port: u16, sent: u64, received: u64, family: u32) {
    let events = finished.json();
    let (client, server) = rows(&events, lport, port);
    let me = std::process::id();
    for (row, tx, rx, role) in [
        (&client, sent, received, "client"),
        (&server, received, sent, "server"),
    ] {
        // tcp_info's counters count sequence space: a SYN the peer acked
        // (an active open) and FINs, one each, besides the data.
        let (t, r) = (
            row["tx_bytes"].as_u64().unwrap(),
            row["rx_bytes"].as_u64().unwrap(),
        );
        assert!((tx..=tx + 2).contains(&t), "tx {tx}: {row}");
        assert!((rx..=rx + 1).contains(&r), "rx {rx}: {row}");
        assert_eq!(row["tx_kb"], tx / 1024, "{row}");
        assert_eq!(row["rx_kb"], rx / 1024, "{row}");
        assert_eq!(row["pid"], me, "{row}");
        assert_eq!(row["owner_known"], true, "{row}");
        assert_eq!(row["role"], role, "{row}");
        assert_eq!(row["ip"], family, "{row}");
        let ms = row["ms"].as_f64().unwrap();
        assert!((1000.0..2000.0).contains(&ms), "{row}");
    }
}

#[test]
fn tcplife_counts_a_sessions_bytes() {
    let ns = netns();
    let json = start(&["--json"]);
    let text = start(&[]);
    let (sent, received) = (300_000, 70_000);
    let lport = session(
        &ns,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 5401)),
        sent,
        received,
        Duration::from_secs(1),
    );
    let (json, text) = (stop(json), stop(text));
    check(&json, lport, 5401, sent as u64, received as u64, 4);
    // The text row: KiB truncated, as BCC's (292 and 68).
    let row = text
        .stdout
        .iter()
        .find(|l| l.contains(&format!(" {lport} ")) && l.contains(" 5401 "))
        .unwrap_or_else(|| panic!("{:?}", text.stdout));
    let f: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(f.len(), 9, "{row}");
    assert_eq!(f[0], std::process::id().to_string());
    assert_eq!(
        (f[2], f[3], f[4], f[5]),
        ("127.0.0.1", &*lport.to_string(), "127.0.0.1", "5401")
    );
    assert_eq!((f[6], f[7]), ("292", "68"), "{row}");
    assert!(f[8].parse::<f64>().unwrap() >= 1000.0);
}

#[test]
fn tcplife_ipv6_wide_and_family_filter() {
    let ns = netns();
    let six = start(&["--json", "-6"]);
    let four = start(&["--json", "-4"]);
    let wide = start(&["-w"]);
    let lport = session(
        &ns,
        SocketAddr::from((Ipv6Addr::LOCALHOST, 5402)),
        4096,
        2048,
        Duration::from_secs(1),
    );
    let (six, four, wide) = (stop(six), stop(four), stop(wide));
    check(&six, lport, 5402, 4096, 2048, 6);
    assert!(four.json().iter().all(|e| e["ip"] == 4));
    let (client, _) = rows(&six.json(), lport, 5402);
    assert_eq!(client["saddr"], "::1");
    assert!(wide.stdout[0].contains(" IP "));
    let row = wide.stdout.iter().find(|l| l.contains(" 5402 ")).unwrap();
    let f: Vec<&str> = row.split_whitespace().collect();
    assert_eq!((f[2], f[3], f[5]), ("6", "::1", "::1"), "{row}");
    assert_eq!((f[7], f[8]), ("4", "2"), "{row}");
}

#[test]
fn tcplife_port_and_pid_filters() {
    let ns = netns();
    let local = start(&["--json", "-L", "5403"]);
    let remote = start(&["--json", "-D", "5403"]);
    let mine = start(&["--json", "-p", &std::process::id().to_string()]);
    let other = start(&["--json", "-p", "1"]);
    let lport = session(
        &ns,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 5403)),
        100,
        100,
        Duration::ZERO,
    );
    let lport2 = session(
        &ns,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 5404)),
        100,
        100,
        Duration::ZERO,
    );
    let (local, remote, mine, other) = (stop(local), stop(remote), stop(mine), stop(other));
    let ports = |f: &Finished| -> Vec<(u64, u64)> {
        f.json()
            .iter()
            .map(|e| (e["lport"].as_u64().unwrap(), e["dport"].as_u64().unwrap()))
            .collect()
    };
    assert_eq!(ports(&local), [(5403, lport as u64)]);
    assert_eq!(ports(&remote), [(lport as u64, 5403)]);
    let mine = ports(&mine);
    for want in [
        (lport as u64, 5403),
        (5403, lport as u64),
        (lport2 as u64, 5404),
        (5404, lport2 as u64),
    ] {
        assert!(mine.contains(&want), "{want:?} not in {mine:?}");
    }
    assert!(!ports(&other)
        .iter()
        .any(|(l, d)| [5403, 5404].contains(l) || [5403, 5404].contains(d)));
}

#[test]
fn tcplife_csv_and_times() {
    let ns = netns();
    let csv = start(&["-stT"]);
    let lport = session(
        &ns,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 5405)),
        2048,
        1024,
        Duration::ZERO,
    );
    let csv = stop(csv);
    assert_eq!(
        csv.stdout[0],
        "TIME,TIME(s),PID,COMM,IP,LADDR,LPORT,RADDR,RPORT,TX_KB,RX_KB,MS"
    );
    let row = csv
        .stdout
        .iter()
        .find(|l| l.contains(&format!(",127.0.0.1,{lport},127.0.0.1,5405,")))
        .unwrap_or_else(|| panic!("{:?}", csv.stdout));
    let f: Vec<&str> = row.split(',').collect();
    assert_eq!(f.len(), 12, "{row}");
    assert_eq!(f[0].len(), 8);
    f[1].parse::<f64>().unwrap();
    assert_eq!((f[4], f[9], f[10]), ("4", "2", "1"), "{row}");
}

#[test]
fn tcplife_classic_tracepoint_fallback() {
    require_root();
    let ns = netns();
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "-v"])
            .env("BPFTOOLS_DISABLE", "tp_btf,raw_tp"),
    );
    let lport = session(
        &ns,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 5406)),
        5000,
        3000,
        Duration::from_secs(1),
    );
    let finished = stop(tool);
    assert!(
        finished
            .stderr
            .contains("tracepoint sock:inet_sock_set_state"),
        "{}",
        finished.stderr
    );
    check(&finished, lport, 5406, 5000, 3000, 4);
}

/// --prom-file: the sessions and bytes of the tool's own rows, by role and
/// service port.
#[test]
fn tcplife_prometheus_counts_sessions_by_service_port() {
    let ns = netns();
    let file = std::env::temp_dir().join(format!("{}.prom", unique("tl-prom")));
    let tool = start(&["--json", "--prom-file", file.to_str().unwrap()]);
    for _ in 0..3 {
        session(
            &ns,
            SocketAddr::from((Ipv4Addr::LOCALHOST, 5407)),
            1000,
            500,
            Duration::ZERO,
        );
    }
    let finished = stop(tool);
    let text = std::fs::read_to_string(&file).unwrap();
    let _ = std::fs::remove_file(&file);
    let value = |name: &str, role: &str| -> u64 {
        let key = format!("{name}_total{{role=\"{role}\",port=\"5407\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(&key))
            .unwrap_or_else(|| panic!("no {key} in {text}"))
            .parse()
            .unwrap()
    };
    assert_eq!(value("tcplife_sessions", "client"), 3);
    assert_eq!(value("tcplife_sessions", "server"), 3);
    // Each session's bytes as its rows gave them (SYN and FIN included).
    let sum = |role: &str, key: &str| -> u64 {
        finished
            .json()
            .iter()
            .filter(|e| e["role"] == role && (e["dport"] == 5407 || e["lport"] == 5407))
            .map(|e| e[key].as_u64().unwrap())
            .sum()
    };
    for (name, key) in [
        ("tcplife_tx_bytes", "tx_bytes"),
        ("tcplife_rx_bytes", "rx_bytes"),
    ] {
        for role in ["client", "server"] {
            assert_eq!(value(name, role), sum(role, key), "{name} {role}");
        }
    }
    assert!((3000..=3006).contains(&value("tcplife_tx_bytes", "client")));
    assert!((1500..=1503).contains(&value("tcplife_rx_bytes", "client")));
    let printed = finished
        .json()
        .iter()
        .filter(|e| e["dport"] == 5407)
        .count();
    assert_eq!(printed, 3);
}

#[test]
fn tcplife_dry_runs() {
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

#[test]
fn tcplife_container_filter_keeps_the_sessions_of_its_sockets() {
    let docker = testkit::FakeContainer::docker();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = thread::spawn(move || {
        for _ in 0..2 {
            let (mut s, _) = listener.accept().unwrap();
            let mut buf = Vec::new();
            s.read_to_end(&mut buf).unwrap();
        }
    });
    let tool = start(&[
        "--json",
        "--container",
        docker.short_id(),
        "-D",
        &port.to_string(),
    ]);
    let client = format!(
        "import socket\ns = socket.create_connection(('127.0.0.1', {port}))\n\
         s.sendall(b'x' * 1000)\ns.close()"
    );
    // One session from inside the container, one from the host.
    let mut cmd = Command::new("python3");
    cmd.args(["-c", &client]);
    assert!(docker.adopt(&mut cmd).status().unwrap().success());
    let mut host = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    host.write_all(&[7u8; 500]).unwrap();
    drop(host);
    server.join().unwrap();
    let events = stop(tool).json();
    let ours: Vec<&Value> = events.iter().filter(|e| e["dport"] == port).collect();
    assert_eq!(ours.len(), 1, "{events:?}");
    // The container's client: its 1000 bytes (bytes_acked counts the SYN
    // and FIN too), not the host's 500.
    assert_eq!(ours[0]["comm"], "python3", "{}", ours[0]);
    let tx = ours[0]["tx_bytes"].as_u64().unwrap();
    assert!((1000..=1002).contains(&tx), "{}", ours[0]);
}
