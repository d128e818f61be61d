//! tcppktlat against a connection of the test's own in a network namespace
//! of its own: 5 messages, each read 30 ms after it was sent, by this
//! thread: 5 reads, each with a wait of at least 30 ms, and nothing from
//! the sending end, which reads nothing.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;
use testbed::Netns;
use testkit::{unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcppktlat");

const WAIT: Duration = Duration::from_millis(30);
const MESSAGES: usize = 5;

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

/// A connection to 127.0.0.1:`port` in a namespace of the test's own:
/// (client, server).
fn connection(port: u16) -> (Netns, TcpStream, TcpStream) {
    let ns = Netns::new(&unique("pl")).expect("creating a network namespace");
    let (client, server) = ns
        .connect(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
        .expect("connecting");
    (ns, client, server)
}

/// The client sends a message, and this thread reads it at the server
/// `WAIT` later, `MESSAGES` times.
fn late_reads(client: &mut TcpStream, server: &mut TcpStream) {
    let mut buf = [0u8; 100];
    for _ in 0..MESSAGES {
        client.write_all(&[7u8; 100]).unwrap();
        std::thread::sleep(WAIT);
        server.read_exact(&mut buf).unwrap();
    }
}

/// This thread's reads.
fn mine(events: &[Value]) -> Vec<&Value> {
    // SAFETY: gettid has no arguments and cannot fail.
    let me = unsafe { libc::gettid() };
    events.iter().filter(|e| e["tid"] == me).collect()
}

/// Each read once, at the server's end, having waited at least WAIT.
fn check(events: &[Value], port: u16, client_port: u16) {
    let seen = mine(events);
    assert_eq!(seen.len(), MESSAGES, "{seen:#?}");
    for e in &seen {
        assert_eq!(e["pid"], std::process::id(), "{e}");
        assert_eq!(e["lport"], port, "{e}");
        assert_eq!(e["rport"], client_port, "{e}");
        assert_eq!(e["laddr"], "127.0.0.1", "{e}");
        assert_eq!(e["raddr"], "127.0.0.1", "{e}");
        assert_eq!(e["ip"], 4, "{e}");
        let us = e["wait_us"].as_f64().unwrap();
        // Not a timing assertion: the data arrived before the sleep began,
        // so it waited for the sleep at least; the upper bound only tells
        // the read from another's.
        assert!(us >= WAIT.as_micros() as f64, "{e}");
        assert!(us < 10.0 * WAIT.as_micros() as f64, "{e}");
    }
}

#[test]
fn tcppktlat_shows_each_late_read_with_its_wait() {
    let _turn = testkit::one_at_a_time();
    let port = 7400;
    let (_ns, mut client, mut server) = connection(port);
    let client_port = client.local_addr().unwrap().port();
    let me = std::process::id().to_string();
    // SAFETY: gettid has no arguments and cannot fail.
    let tid = unsafe { libc::gettid() }.to_string();
    let json = start(&["--json", "-l", &port.to_string()], "");
    let above = start(&["--json", "-m", "20000", "-p", &me], "");
    let none = start(&["--json", "200000", "-p", &me], "");
    let remote = start(&["--json", "-r", &client_port.to_string(), "-t", &tid], "");
    let other = start(&["--json", "-r", "9", "-p", &me], "");
    let text = start(&["-l", &port.to_string()], "");
    late_reads(&mut client, &mut server);
    let (json, above, none, remote, other, text) = (
        stop(json),
        stop(above),
        stop(none),
        stop(remote),
        stop(other),
        stop(text),
    );
    check(&json.json(), port, client_port);
    check(&above.json(), port, client_port);
    check(&remote.json(), port, client_port);
    // 200 ms and more, or another remote port: none of them.
    assert!(mine(&none.json()).is_empty(), "{:?}", none.stdout);
    assert!(mine(&other.json()).is_empty(), "{:?}", other.stdout);
    // libbpf-tools' layout, the wait in milliseconds.
    assert_eq!(
        text.stdout[0],
        "PID     TID     COMM             LADDR           LPORT RADDR           RPORT MS"
    );
    let lines: Vec<Vec<&str>> = text.stdout[1..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines.len(), MESSAGES, "{:?}", text.stdout);
    for l in &lines {
        assert_eq!(l[..2], [me.as_str(), tid.as_str()], "{l:?}");
        let port = port.to_string();
        let theirs = client_port.to_string();
        assert_eq!(
            l[3..7],
            ["127.0.0.1", port.as_str(), "127.0.0.1", theirs.as_str()],
            "{l:?}"
        );
        let ms: f64 = l[7].parse().unwrap();
        assert!(ms >= 30.0, "{l:?}");
    }
}

/// Each variant: tp_btf, and raw_tp where it is missing; each on its own
/// connection.
#[test]
fn tcppktlat_hook_variants() {
    let _turn = testkit::one_at_a_time();
    for (disable, hook, port) in [
        ("", "tp_btf tcp_probe", 7401),
        ("tp_btf", "raw_tp tcp_probe", 7402),
    ] {
        let (_ns, mut client, mut server) = connection(port);
        let client_port = client.local_addr().unwrap().port();
        let tool = start(&["--json", "-v", "-l", &port.to_string()], disable);
        late_reads(&mut client, &mut server);
        let done = stop(tool);
        assert!(done.stderr.contains(hook), "{hook}: {}", done.stderr);
        check(&done.json(), port, client_port);
    }
}
