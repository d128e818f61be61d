//! tcpstates against real sessions over the loopback of a network namespace
//! of the test's own: every state of both ends, in order.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, Ipv6Addr, Shutdown, SocketAddr, TcpStream};
use std::os::unix::net::UnixDatagram;
use std::process::Command;
use std::thread;
use std::time::Duration;

use serde_json::Value;
use testbed::Netns;
use testkit::{require_root, stop_and_check_unloaded, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcpstates");

fn netns() -> Netns {
    Netns::new(&unique("ts")).expect("creating a network namespace")
}

/// One session to `addr` in `ns`: the client connects, writes, holds the
/// connection `hold`, and ends it first; the server reads to the end and
/// ends it too. Both end with shutdown(), not close(): a close() is only
/// the last one when no process forked meanwhile holds the descriptor (the
/// test harness spawns tools from other threads; such a child closes it at
/// exec, and the change is rightly shown as the child's). Returns the
/// client's local port and both sockets, for the caller to close once the
/// tool has stopped.
fn session(ns: &Netns, addr: SocketAddr, hold: Duration) -> (u16, [TcpStream; 2]) {
    let (mut client, mut server) = ns.connect(addr).expect("connecting in the namespace");
    let lport = client.local_addr().unwrap().port();
    client.write_all(b"hello").unwrap();
    thread::sleep(hold);
    client.shutdown(Shutdown::Write).unwrap();
    let mut got = Vec::new();
    server.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"hello");
    server.shutdown(Shutdown::Write).unwrap();
    // The server's FIN has reached the client once it reads the end.
    assert_eq!(client.read(&mut [0u8; 8]).unwrap(), 0);
    (lport, [client, server])
}

fn start(args: &[&str]) -> Traced {
    require_root();
    Traced::start(BIN, args)
}

/// A socket's changes in the session on `port`, as "OLD->NEW" with its
/// ms, in the order shown. (Its address alone is not enough: the kernel
/// reuses a freed socket's memory, for other tests' sockets too.)
fn by_socket(events: &[Value], skaddr: &Value, port: u16) -> Vec<(String, f64)> {
    events
        .iter()
        .filter(|e| &e["skaddr"] == skaddr && (e["lport"] == port || e["dport"] == port))
        .map(|e| {
            (
                format!(
                    "{}->{}",
                    e["oldstate"].as_str().unwrap(),
                    e["newstate"].as_str().unwrap()
                ),
                e["ms"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn changes(seq: &[(String, f64)]) -> Vec<&str> {
    seq.iter().map(|(c, _)| c.as_str()).collect()
}

/// The sockets of a session with server port `port`: (client, server's
/// accepted socket, listener), each found by its first change.
fn sockets(events: &[Value], port: u16, lport: u16) -> (&Value, &Value, &Value) {
    let find = |pred: &dyn Fn(&Value) -> bool, what: &str| {
        &events
            .iter()
            .find(|e| pred(e))
            .unwrap_or_else(|| panic!("no {what} in {events:#?}"))["skaddr"]
    };
    let client = find(
        &|e| e["newstate"] == "SYN_SENT" && e["dport"] == port,
        "connect",
    );
    let listener = find(
        &|e| e["newstate"] == "LISTEN" && e["lport"] == port,
        "listen",
    );
    let accepted = find(
        &|e| e["newstate"] == "ESTABLISHED" && e["lport"] == port && e["dport"] == lport,
        "accepted socket",
    );
    (client, accepted, listener)
}

fn traced_session(args: &[&str], addr: SocketAddr) -> (Finished, u16) {
    let ns = netns();
    let tool = start(args);
    let (lport, _sockets) = session(&ns, addr, Duration::from_millis(300));
    thread::sleep(Duration::from_millis(200));
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");
    (finished, lport)
}

fn check_session(finished: &Finished, port: u16, lport: u16, family: u32) {
    let events = finished.json();
    let (client, accepted, listener) = sockets(&events, port, lport);
    let client = by_socket(&events, client, port);
    assert_eq!(
        changes(&client),
        [
            "CLOSE->SYN_SENT",
            "SYN_SENT->ESTABLISHED",
            "ESTABLISHED->FIN_WAIT1",
            "FIN_WAIT1->FIN_WAIT2",
            "FIN_WAIT2->CLOSE"
        ],
        "{client:?}"
    );
    // The first change has no previous one; ESTABLISHED was held 300 ms.
    assert_eq!(client[0].1, 0.0);
    assert!((300.0..1000.0).contains(&client[2].1), "{client:?}");
    let accepted = by_socket(&events, accepted, port);
    assert_eq!(
        changes(&accepted)[1..],
        [
            "SYN_RECV->ESTABLISHED",
            "ESTABLISHED->CLOSE_WAIT",
            "CLOSE_WAIT->LAST_ACK",
            "LAST_ACK->CLOSE"
        ],
        "{accepted:?}"
    );
    assert_eq!(changes(&accepted)[0], "LISTEN->SYN_RECV", "{accepted:?}");
    let listener = by_socket(&events, listener, port);
    assert_eq!(changes(&listener), ["CLOSE->LISTEN", "LISTEN->CLOSE"]);
    // Changes a process makes run in it: connect, listen, both shutdowns.
    let me = std::process::id();
    for e in events
        .iter()
        .filter(|e| e["lport"] == port || e["dport"] == port)
    {
        assert_eq!(e["ip"], family, "{e}");
        let by_process = matches!(
            (
                e["oldstate"].as_str().unwrap(),
                e["newstate"].as_str().unwrap()
            ),
            ("CLOSE", "SYN_SENT")
                | ("CLOSE", "LISTEN")
                | ("ESTABLISHED", "FIN_WAIT1")
                | ("CLOSE_WAIT", "LAST_ACK")
        );
        if by_process {
            assert_eq!(e["pid"], me, "{e}");
        }
    }
}

#[test]
fn tcpstates_session_in_order() {
    let (finished, lport) =
        traced_session(&["--json"], SocketAddr::from((Ipv4Addr::LOCALHOST, 5301)));
    check_session(&finished, 5301, lport, 4);
}

#[test]
fn tcpstates_ipv6_session_and_family_filter() {
    let (finished, lport) = traced_session(
        &["--json", "-6"],
        SocketAddr::from((Ipv6Addr::LOCALHOST, 5302)),
    );
    check_session(&finished, 5302, lport, 6);
    assert!(finished.json().iter().all(|e| e["ip"] == 6));
    let e = finished
        .json()
        .into_iter()
        .find(|e| e["lport"] == 5302)
        .unwrap();
    assert_eq!(e["saddr"], "::1");
}

#[test]
fn tcpstates_classic_tracepoint_fallback() {
    require_root();
    let ns = netns();
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "-v"])
            .env("BPFTOOLS_DISABLE", "tp_btf,raw_tp"),
    );
    let (lport, _sockets) = session(
        &ns,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 5303)),
        Duration::from_millis(300),
    );
    thread::sleep(Duration::from_millis(200));
    let finished = stop_and_check_unloaded(tool);
    assert!(
        finished
            .stderr
            .contains("tracepoint sock:inet_sock_set_state"),
        "{}",
        finished.stderr
    );
    check_session(&finished, 5303, lport, 4);
}

#[test]
fn tcpstates_text_columns_and_port_filters() {
    let ns = netns();
    let local = start(&["-L", "5304"]);
    let remote = start(&["-tT", "-D", "5304"]);
    let csv = start(&["-s"]);
    let (lport, _first) = session(
        &ns,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 5304)),
        Duration::from_millis(100),
    );
    let _second = session(
        &ns,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 5305)),
        Duration::from_millis(100),
    );
    thread::sleep(Duration::from_millis(200));
    let (local, remote, csv) = (local.stop(), remote.stop(), csv.stop());
    assert_eq!(
        local.stdout[0].split_whitespace().collect::<Vec<_>>(),
        [
            "SKADDR", "C-PID", "C-COMM", "LADDR", "LPORT", "RADDR", "RPORT", "OLDSTATE", "->",
            "NEWSTATE", "MS"
        ]
    );
    // -L: the listener and the accepted socket (local port 5304), nothing of 5305.
    let rows: Vec<Vec<&str>> = local.stdout[1..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(
        rows.iter().all(|r| r.len() == 11 && r[4] == "5304"),
        "{rows:?}"
    );
    assert!(rows.iter().any(|r| r[7] == "CLOSE" && r[9] == "LISTEN"));
    assert!(rows
        .iter()
        .any(|r| r[7] == "LAST_ACK" && r[9] == "CLOSE" && r[6] == lport.to_string()));
    // -D: the client's socket (remote port 5304): its 5 changes.
    let rows: Vec<Vec<&str>> = remote.stdout[1..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 5, "{rows:?}");
    assert!(rows
        .iter()
        .all(|r| r[8] == "5304" && r[0].len() == 8 && r[0].contains(':')));
    assert_eq!(rows[0][1], "0.000000");
    // -s: BCC's CSV, with the IP column.
    assert_eq!(
        csv.stdout[0],
        "SKADDR,C-PID,C-COMM,IP,LADDR,LPORT,RADDR,RPORT,OLDSTATE,NEWSTATE,MS"
    );
    assert!(csv
        .stdout
        .iter()
        .any(|l| l.contains(",4,127.0.0.1,5305,127.0.0.1,") && l.contains(",LAST_ACK,CLOSE,")));
}

#[test]
fn tcpstates_journal_entries_carry_bccs_fields() {
    require_root();
    let path = std::env::temp_dir().join(unique("journal"));
    let sink = UnixDatagram::bind(&path).unwrap();
    sink.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let ns = netns();
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["-Y", "-L", "5306"])
            .env("BPFTOOLS_JOURNAL_SOCKET", &path),
    );
    let _sockets = session(
        &ns,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 5306)),
        Duration::from_millis(50),
    );
    thread::sleep(Duration::from_millis(200));
    let finished = tool.stop();
    let mut entries = Vec::new();
    let mut buf = vec![0u8; 65536];
    sink.set_nonblocking(true).unwrap();
    while let Ok(n) = sink.recv(&mut buf) {
        entries.push(String::from_utf8_lossy(&buf[..n]).into_owned());
    }
    let _ = std::fs::remove_file(&path);
    // One entry per change printed.
    assert_eq!(entries.len(), finished.stdout.len() - 1, "{entries:?}");
    let listen = entries
        .iter()
        .find(|e| e.contains("OBJECT_TCP_NEW_STATE=LISTEN\n"))
        .expect("the listen entry");
    for field in [
        "SYSLOG_IDENTIFIER=tcpstates\n",
        "PRIORITY=5\n",
        &format!("OBJECT_PID={}\n", std::process::id()),
        "OBJECT_IPV4_SOURCE_ADDRESS=127.0.0.1\n",
        "OBJECT_TCP_SOURCE_PORT=5306\n",
        "OBJECT_TCP_OLD_STATE=CLOSE\n",
        "OBJECT_TCP_SPAN_TIME=0\n",
    ] {
        assert!(listen.contains(field), "{field} missing: {listen}");
    }
    assert!(listen.starts_with("MESSAGE="), "{listen}");
}

/// The filter matches the socket's cgroup: a container's client socket has
/// every change shown, those in softirq context too; the host's client and
/// the server's accepted sockets (the listener's cgroup) none.
#[test]
fn tcpstates_container_filter_keeps_its_sockets_changes() {
    require_root();
    let docker = testkit::FakeContainer::docker();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = thread::spawn(move || {
        for _ in 0..2 {
            let (mut s, _) = listener.accept().unwrap();
            s.read_to_end(&mut Vec::new()).unwrap();
            s.shutdown(Shutdown::Write).unwrap();
        }
    });
    let tool = start(&["--json", "--container", docker.short_id()]);
    let client = format!(
        "import socket\n\
         s = socket.create_connection(('127.0.0.1', {port}))\n\
         print(s.getsockname()[1], flush=True)\n\
         s.sendall(b'x')\n\
         s.shutdown(socket.SHUT_WR)\n\
         s.recv(1)\n"
    );
    let mut cmd = Command::new("python3");
    cmd.args(["-c", &client]);
    let out = docker.adopt(&mut cmd).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let inside: u16 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    let mut host = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let host_port = host.local_addr().unwrap().port();
    host.write_all(b"y").unwrap();
    host.shutdown(Shutdown::Write).unwrap();
    assert_eq!(host.read(&mut [0u8; 1]).unwrap(), 0);
    server.join().unwrap();
    thread::sleep(Duration::from_millis(200));
    let finished = stop_and_check_unloaded(tool);
    assert!(finished.status.success(), "{finished:?}");
    let events = finished.json();
    let changes: Vec<String> = events
        .iter()
        .filter(|e| e["dport"] == port)
        .map(|e| {
            format!(
                "{}->{}",
                e["oldstate"].as_str().unwrap(),
                e["newstate"].as_str().unwrap()
            )
        })
        .collect();
    // The client's path to its close (FIN_WAIT2 ends in TIME_WAIT, which
    // the kernel shows as CLOSE).
    let first: Vec<&str> = changes.iter().take(4).map(String::as_str).collect();
    assert_eq!(
        first,
        [
            "CLOSE->SYN_SENT",
            "SYN_SENT->ESTABLISHED",
            "ESTABLISHED->FIN_WAIT1",
            "FIN_WAIT1->FIN_WAIT2"
        ],
        "{events:#?}"
    );
    // Its port is bound at the connect: none before.
    for e in events.iter().filter(|e| e["dport"] == port).skip(1) {
        assert_eq!(e["lport"], inside, "{e}");
    }
    // Neither the server's sockets nor the host's client.
    assert!(
        !events
            .iter()
            .any(|e| e["lport"] == port || e["lport"] == host_port || e["dport"] == host_port),
        "{events:#?}"
    );
}

#[test]
fn tcpstates_journal_missing_is_an_error() {
    require_root();
    let out = testkit::run_with_env(
        BIN,
        &["-Y"],
        &[("BPFTOOLS_JOURNAL_SOCKET", "/nonexistent/journal")],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr
            .contains("-Y: no systemd journal at /nonexistent/journal"),
        "{}",
        out.stderr
    );
}

#[test]
fn tcpstates_dry_runs() {
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
