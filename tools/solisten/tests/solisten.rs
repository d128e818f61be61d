//! solisten against listen() calls of the test's own: a TCP socket bound
//! to 127.0.0.1 with a backlog of 16, an unbound IPv6 one (listen picks its
//! port) asking more than net.core.somaxconn allows, two sockets sharing a
//! port with SO_REUSEPORT, and a UDP socket, whose listen() fails
//! (EOPNOTSUPP): each seen once, in order, with its address, port, backlog
//! and result.

use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::fs::MetadataExt;
use std::time::Duration;

use serde_json::Value;
use socket2::{Domain, Socket, Type};
use testkit::{Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_solisten");

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

fn socket(domain: Domain, kind: Type) -> Socket {
    Socket::new(domain, kind, None).expect("socket")
}

/// Bound to 127.0.0.1:`port`, with SO_REUSEPORT where `share`.
fn bound(kind: Type, port: u16, share: bool) -> Socket {
    let s = socket(Domain::IPV4, kind);
    s.set_reuse_port(share).unwrap();
    s.bind(&SocketAddr::from((Ipv4Addr::LOCALHOST, port)).into())
        .expect("bind");
    s
}

/// listen()'s error number, where it failed.
fn listen(s: &Socket, backlog: i32) -> Result<(), i32> {
    s.listen(backlog).map_err(|e| e.raw_os_error().unwrap())
}

/// The local port.
fn port_of(s: &Socket) -> u16 {
    s.local_addr().unwrap().as_socket().unwrap().port()
}

/// What the calls made: the sockets (open until the tools stop) and their
/// ports, in the calls' order.
struct Listens {
    _sockets: Vec<Socket>,
    ports: Vec<u16>,
}

/// The five listen() calls, from this thread.
fn listens() -> Listens {
    let a = bound(Type::STREAM, 0, false);
    listen(&a, 16).unwrap();
    let b = socket(Domain::IPV6, Type::STREAM);
    listen(&b, 4_096_000).unwrap();
    let c = bound(Type::STREAM, 0, true);
    let d = bound(Type::STREAM, port_of(&c), true);
    listen(&c, 8).unwrap();
    listen(&d, 8).unwrap();
    let e = bound(Type::DGRAM, 0, false);
    assert_eq!(listen(&e, 5), Err(libc::EOPNOTSUPP));
    let ports = [&a, &b, &c, &d, &e].map(port_of).to_vec();
    Listens {
        _sockets: vec![a, b, c, d, e],
        ports,
    }
}

/// This thread's calls (the tests run side by side in one process).
fn mine(events: &[Value]) -> Vec<&Value> {
    // SAFETY: gettid has no arguments and cannot fail.
    let me = unsafe { libc::gettid() };
    events.iter().filter(|e| e["tid"] == me).collect()
}

fn somaxconn() -> u64 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn own_netns() -> u64 {
    std::fs::metadata("/proc/self/ns/net").unwrap().ino()
}

/// Each call once, in order: protocol, address, port, backlog (in force
/// and asked) and result (the failed one where `failed`).
fn check(events: &[Value], made: &Listens, failed: bool) {
    let seen = mine(events);
    let got: Vec<(String, String, u64, u64, i64, i64)> = seen
        .iter()
        .map(|e| {
            (
                e["proto"].as_str().unwrap().to_string(),
                e["addr"].as_str().unwrap().to_string(),
                e["port"].as_u64().unwrap(),
                e["backlog"].as_u64().unwrap(),
                e["asked_backlog"].as_i64().unwrap(),
                e["ret"].as_i64().unwrap(),
            )
        })
        .collect();
    let row = |p: &str, a: &str, i: usize, b: u64, asked: i64, r: i32| {
        let port = u64::from(made.ports[i]);
        (p.to_string(), a.to_string(), port, b, asked, i64::from(r))
    };
    let mut want = vec![
        row("TCPv4", "127.0.0.1", 0, 16, 16, 0),
        row("TCPv6", "::", 1, somaxconn(), 4_096_000, 0),
        row("TCPv4", "127.0.0.1", 2, 8, 8, 0),
        row("TCPv4", "127.0.0.1", 3, 8, 8, 0),
        row("UDPv4", "127.0.0.1", 4, 5, 5, -libc::EOPNOTSUPP),
    ];
    if failed {
        want.drain(..4);
    }
    assert_eq!(got, want, "{seen:#?}");
    assert_eq!(made.ports[2], made.ports[3], "SO_REUSEPORT: one port");
    for e in &seen {
        assert_eq!(e["netns"], own_netns(), "{e}");
        assert!(e["latency_ns"].as_u64().unwrap() > 0, "{e}");
        assert_eq!(e["error"].is_null(), e["ret"] == 0, "{e}");
    }
}

#[test]
fn solisten_shows_each_listen_with_its_port_and_backlog() {
    // The text runs have no thread column: each test's calls would show
    // in the others'.
    let _turn = testkit::one_at_a_time();
    let me = std::process::id().to_string();
    let netns = own_netns().to_string();
    let json = start(&["--json", "-p", &me], "");
    let failed = start(&["--json", "-x", "-p", &me], "");
    let text = start(&["-t", "--show-netns", "-p", &me], "");
    let v6 = start(&["--json", "-6", "-n", &netns, "-p", &me], "");
    let elsewhere = start(&["--json", "-n", "1", "-p", &me], "");
    let made = listens();
    let (json, failed, text, v6, elsewhere) = (
        stop(json),
        stop(failed),
        stop(text),
        stop(v6),
        stop(elsewhere),
    );
    // -P: a third socket joining the two on their port (SO_REUSEPORT) is
    // shown; one listening elsewhere is not.
    let on_port = start(&["--json", "-P", &made.ports[2].to_string(), "-p", &me], "");
    let third = bound(Type::STREAM, made.ports[2], true);
    listen(&third, 8).unwrap();
    let other = bound(Type::STREAM, 0, false);
    listen(&other, 8).unwrap();
    let on_port = stop(on_port);
    check(&json.json(), &made, false);
    check(&failed.json(), &made, true);
    // -6 -n (this namespace): the IPv6 listener; -n of another: nothing.
    let v6 = v6.json();
    let v6: Vec<&Value> = mine(&v6);
    assert_eq!(v6.len(), 1, "{v6:#?}");
    assert_eq!(v6[0]["port"], made.ports[1], "{v6:#?}");
    assert!(elsewhere.json().is_empty(), "{:?}", elsewhere.stdout);
    let on_port = on_port.json();
    let on_port: Vec<&Value> = mine(&on_port);
    assert_eq!(on_port.len(), 1, "{on_port:#?}");
    assert_eq!(on_port[0]["port"], made.ports[2], "{on_port:#?}");
    // -t --show-netns: BCC's layout with its NETNS column, and RET.
    assert_eq!(
        text.stdout[0],
        "TIME(s)   PID     COMM         NETNS        RET        PROTO  BACKLOG  PORT  ADDR",
        "{:?}",
        text.stdout
    );
    let lines: Vec<Vec<&str>> = text.stdout[1..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines.len(), 5, "{:?}", text.stdout);
    let first = &lines[0];
    let port = made.ports[0].to_string();
    assert_eq!(first[0], "0.000000", "{first:?}");
    assert_eq!(first[1], me, "{first:?}");
    assert_eq!(
        first[3..],
        [netns.as_str(), "0", "TCPv4", "16", &port, "127.0.0.1"],
        "{first:?}"
    );
    assert_eq!(lines[4][4..6], ["EOPNOTSUPP", "UDPv4"], "{:?}", lines[4]);
}

/// Each variant: the call's own tracepoints; tp_btf sys_enter/sys_exit
/// where they are missing; the two side by side on one run of the calls.
#[test]
fn solisten_hook_variants() {
    let _turn = testkit::one_at_a_time();
    let me = std::process::id().to_string();
    let variants = [
        ("", "tracepoint syscalls:sys_enter_listen"),
        ("tracepoint", "tp_btf sys_enter"),
    ];
    let tools: Vec<Traced> = variants
        .iter()
        .map(|(disable, _)| start(&["--json", "-v", "-p", &me], disable))
        .collect();
    let made = listens();
    for ((_, hook), tool) in variants.into_iter().zip(tools) {
        let done = stop(tool);
        assert!(done.stderr.contains(hook), "{hook}: {}", done.stderr);
        check(&done.json(), &made, false);
    }
}
