//! bindsnoop against binds of the test's own, on loopback and the wildcard
//! address: a TCP socket with SO_REUSEADDR and SO_REUSEPORT on a port the
//! kernel picks, a UDP IPv6 socket with IP_FREEBIND and IP_TRANSPARENT, a
//! socket bound to `lo` (SO_BINDTODEVICE), one with IP_BIND_ADDRESS_NO_PORT,
//! and a bind to the first one's port that fails (EADDRINUSE): each seen
//! once, in order, with its address, port, options and result.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::time::Duration;

use serde_json::Value;
use socket2::{Domain, SockAddr, Socket, Type};
use testkit::{Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_bindsnoop");

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

fn socket(domain: Domain, kind: Type) -> Socket {
    Socket::new(domain, kind, None).expect("socket")
}

/// 127.0.0.1:`port`.
fn local(port: u16) -> SockAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port)).into()
}

/// The local port the kernel gave.
fn port_of(s: &Socket) -> u16 {
    s.local_addr().unwrap().as_socket().unwrap().port()
}

/// A bind's error number, where it failed.
fn bind(s: &Socket, to: &SockAddr) -> Result<(), i32> {
    s.bind(to).map_err(|e| e.raw_os_error().unwrap())
}

/// IP_BIND_ADDRESS_NO_PORT, which socket2 does not set.
fn bind_address_no_port(s: &Socket) {
    let one: libc::c_int = 1;
    // SAFETY: an int option of a socket of ours, with its size.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
}

/// What the binds gave: the sockets (kept open until the tools stop) and
/// the first one's port.
struct Binds {
    _sockets: Vec<Socket>,
    port: u16,
}

/// The five binds, from this thread.
fn binds() -> Binds {
    let a = socket(Domain::IPV4, Type::STREAM);
    a.set_reuse_address(true).unwrap();
    a.set_reuse_port(true).unwrap();
    bind(&a, &local(0)).unwrap();
    let port = port_of(&a);
    let b = socket(Domain::IPV6, Type::DGRAM);
    b.set_freebind_v6(true).unwrap();
    b.set_ip_transparent_v6(true).unwrap();
    bind(&b, &SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0)).into()).unwrap();
    let c = socket(Domain::IPV4, Type::DGRAM);
    c.bind_device(Some(b"lo")).unwrap();
    bind(&c, &local(0)).unwrap();
    let d = socket(Domain::IPV4, Type::STREAM);
    bind_address_no_port(&d);
    bind(&d, &local(0)).unwrap();
    let e = socket(Domain::IPV4, Type::STREAM);
    assert_eq!(bind(&e, &local(port)), Err(libc::EADDRINUSE));
    Binds {
        _sockets: vec![a, b, c, d, e],
        port,
    }
}

/// This thread's binds (the tests run side by side in one process).
fn mine(events: &[Value]) -> Vec<&Value> {
    // SAFETY: gettid has no arguments and cannot fail.
    let me = unsafe { libc::gettid() };
    events.iter().filter(|e| e["tid"] == me).collect()
}

/// Each bind once, in order, with its address, port, options and result
/// (the failed one where `errors`).
fn check(events: &[Value], binds: &Binds, errors: bool) {
    let seen = mine(events);
    let fields = |e: &Value| {
        (
            e["protocol"].as_str().unwrap().to_string(),
            e["addr"].as_str().unwrap().to_string(),
            e["options"].as_str().unwrap().to_string(),
            e["if"].as_u64().unwrap(),
            e["ret"].as_i64().unwrap(),
        )
    };
    let got: Vec<_> = seen.iter().map(|e| fields(e)).collect();
    let row = |p: &str, a: &str, o: &str, i: u64, r: i64| {
        (p.to_string(), a.to_string(), o.to_string(), i, r)
    };
    let lo: u64 = std::fs::read_to_string("/sys/class/net/lo/ifindex")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut want = vec![
        row("TCP", "127.0.0.1", "SO_REUSEADDR|SO_REUSEPORT", 0, 0),
        row("UDP", "::", "IP_FREEBIND|IP_TRANSPARENT", 0, 0),
        row("UDP", "127.0.0.1", "", lo, 0),
        row("TCP", "127.0.0.1", "IP_BIND_ADDRESS_NO_PORT", 0, 0),
    ];
    if errors {
        want.push(row("TCP", "127.0.0.1", "", 0, -i64::from(libc::EADDRINUSE)));
    }
    assert_eq!(got, want, "{seen:#?}");
    let ports: Vec<u64> = seen.iter().map(|e| e["port"].as_u64().unwrap()).collect();
    assert_eq!(ports[0], u64::from(binds.port), "{seen:#?}");
    assert!(
        ports[1] > 0 && ports[2] > 0,
        "the kernel's picks: {seen:#?}"
    );
    assert_eq!(
        ports[3], 0,
        "IP_BIND_ADDRESS_NO_PORT: no port until connect: {seen:#?}"
    );
    if errors {
        // The failed bind: what it asked for.
        assert_eq!(ports[4], u64::from(binds.port), "{seen:#?}");
        assert_eq!(seen[4]["error"], "EADDRINUSE", "{seen:#?}");
    }
    for e in &seen {
        assert_eq!(e["uid"], 0, "{e}");
        assert!(e["latency_ns"].as_u64().unwrap() > 0, "{e}");
        assert!(e["netns"].as_u64().unwrap() > 0, "{e}");
        assert_eq!(e["ip"], if e["addr"] == "::" { 6 } else { 4 }, "{e}");
    }
}

#[test]
fn bindsnoop_shows_each_bind_with_its_options_and_result() {
    // The text runs have no thread column: each test's calls would show
    // in the others'.
    let _turn = testkit::one_at_a_time();
    let me = std::process::id().to_string();
    let json = start(&["--json", "-p", &me], "");
    let errors = start(&["--json", "-x", "-p", &me], "");
    let text = start(&["-t", "-U", "-E", "-p", &me], "");
    let v6 = start(&["--json", "-6", "-p", &me], "");
    let other = start(&["--json", "-u", "4242"], "");
    let made = binds();
    let (json, errors, text, v6, other) =
        (stop(json), stop(errors), stop(text), stop(v6), stop(other));
    // -P: a bind to that port beside the first socket (both with
    // SO_REUSEPORT), one that fails on it, and one elsewhere, not shown.
    let ports = start(
        &["--json", "-E", "-P", &made.port.to_string(), "-p", &me],
        "",
    );
    let beside = socket(Domain::IPV4, Type::STREAM);
    beside.set_reuse_address(true).unwrap();
    beside.set_reuse_port(true).unwrap();
    bind(&beside, &local(made.port)).unwrap();
    let refused = socket(Domain::IPV4, Type::STREAM);
    assert_eq!(bind(&refused, &local(made.port)), Err(libc::EADDRINUSE));
    let elsewhere = socket(Domain::IPV4, Type::STREAM);
    bind(&elsewhere, &local(0)).unwrap();
    let ports = stop(ports);
    check(&json.json(), &made, false);
    check(&errors.json(), &made, true);
    // -6: the IPv6 bind alone; -u: no bind of a uid no process has.
    let v6 = v6.json();
    assert_eq!(mine(&v6).len(), 1, "{v6:#?}");
    assert_eq!(mine(&v6)[0]["addr"], "::", "{v6:#?}");
    assert!(other.json().is_empty(), "{:?}", other.stdout);
    let on_port = ports.json();
    let on_port: Vec<(&Value, &Value)> = mine(&on_port)
        .iter()
        .map(|e| (&e["port"], &e["ret"]))
        .collect();
    let port = Value::from(made.port);
    let (ok, in_use) = (Value::from(0), Value::from(-libc::EADDRINUSE));
    assert_eq!(on_port, [(&port, &ok), (&port, &in_use)]);
    // -t -U -E: BCC's layout, an RC column with the error's name.
    assert_eq!(
        text.stdout[0],
        "TIME(s)      UID RC                 PID COMM         PROT ADDR             PORT OPTS  IF",
        "{:?}",
        text.stdout
    );
    let lines: Vec<Vec<&str>> = text.stdout[1..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines.len(), 5, "{:?}", text.stdout);
    let first = &lines[0];
    assert_eq!(first[0], "0.000000", "{first:?}");
    assert_eq!(
        first[1..],
        [
            "0",
            "0",
            &me,
            first[4],
            "TCP",
            "127.0.0.1",
            &made.port.to_string(),
            "...Rr",
            "0"
        ],
        "{first:?}"
    );
    let failed = &lines[4];
    assert_eq!(failed[2], "EADDRINUSE", "{failed:?}");
    assert_eq!(
        failed[7..],
        [made.port.to_string().as_str(), ".....", "0"],
        "{failed:?}"
    );
}

/// --count: binds per address and port, printed at the end, BCC's table.
#[test]
fn bindsnoop_counts_binds_per_address_and_port() {
    let _turn = testkit::one_at_a_time();
    let me = std::process::id().to_string();
    let tool = start(&["--count", "-p", &me], "");
    let first = socket(Domain::IPV4, Type::DGRAM);
    first.set_reuse_port(true).unwrap();
    bind(&first, &local(0)).unwrap();
    let port = port_of(&first);
    let more: Vec<Socket> = (0..2)
        .map(|_| {
            let s = socket(Domain::IPV4, Type::DGRAM);
            s.set_reuse_port(true).unwrap();
            bind(&s, &local(port)).unwrap();
            s
        })
        .collect();
    let done = stop(tool);
    drop(more);
    let header = done
        .stdout
        .iter()
        .position(|l| l.starts_with("LADDR"))
        .unwrap_or_else(|| panic!("no counts table: {:?}", done.stdout));
    let row = format!("{:<32} {:>20} 3", "127.0.0.1", port);
    assert!(
        done.stdout[header + 1..].contains(&row),
        "{row:?} in {:?}",
        done.stdout
    );
}

/// Each variant: the call's own tracepoints; tp_btf sys_enter/sys_exit
/// where they are missing; the two side by side on one run of the binds.
#[test]
fn bindsnoop_hook_variants() {
    let _turn = testkit::one_at_a_time();
    let me = std::process::id().to_string();
    let variants = [
        ("", "tracepoint syscalls:sys_enter_bind"),
        ("tracepoint", "tp_btf sys_enter"),
    ];
    let tools: Vec<Traced> = variants
        .iter()
        .map(|(disable, _)| start(&["--json", "-E", "-v", "-p", &me], disable))
        .collect();
    let made = binds();
    for ((_, hook), tool) in variants.into_iter().zip(tools) {
        let done = stop(tool);
        assert!(done.stderr.contains(hook), "{hook}: {}", done.stderr);
        check(&done.json(), &made, true);
    }
}
