//! tcpsynbl against listeners of the test's own, in network namespaces of
//! its own (loopback only): a listener that accepts nothing fills its
//! queue to its limit, one that accepts each connection keeps it empty,
//! and the histograms hold exactly the backlogs the kernel's queue had.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::process::{Command, Stdio};
use std::thread;
use std::time::Duration;

use serde_json::Value;
use socket2::{Domain, Socket, Type};
use testbed::Netns;
use testkit::{unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcpsynbl");

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(300))
}

fn netns() -> Netns {
    Netns::new(&unique("sb")).expect("creating a network namespace")
}

/// A listener on `addr` with `backlog`, and `clients` sockets not yet
/// connected, all made in namespace `ns` (sockets keep their namespace,
/// so the caller's thread may use them).
fn sockets(ns: &Netns, addr: SocketAddr, backlog: i32, clients: usize) -> (Socket, Vec<Socket>) {
    let name = ns.name().to_string();
    thread::spawn(move || {
        Netns::enter(&name).unwrap();
        let domain = Domain::for_address(addr);
        let listener = Socket::new(domain, Type::STREAM, None).unwrap();
        listener.set_reuse_address(true).unwrap();
        listener.bind(&addr.into()).unwrap();
        listener.listen(backlog).unwrap();
        let clients = (0..clients)
            .map(|_| Socket::new(domain, Type::STREAM, None).unwrap())
            .collect();
        (listener, clients)
    })
    .join()
    .unwrap()
}

/// Connects each client without waiting (the handshakes the queue has
/// room for complete; the rest wait on their SYN's retransmission).
fn connect_all(clients: &[Socket], addr: SocketAddr) {
    for c in clients {
        c.set_nonblocking(true).unwrap();
        match c.connect(&addr.into()) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => panic!("connecting to {addr}: {e}"),
        }
    }
}

/// Lets the handshakes of non-blocking connects complete (loopback: within
/// milliseconds, but in softirq, after connect() returns).
fn settle() {
    thread::sleep(Duration::from_millis(300));
}

/// The histogram of backlog limit `max` (and port, where given).
fn section(hists: &[Value], max: u64) -> &Value {
    let of: Vec<&Value> = hists.iter().filter(|h| h["backlog_max"] == max).collect();
    assert_eq!(of.len(), 1, "backlog_max {max}: {hists:#?}");
    of[0]
}

/// (low, high, count) of each non-empty bucket.
fn buckets(h: &Value) -> Vec<(u64, u64, u64)> {
    h["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["low"].as_u64().unwrap(),
                b["high"].as_u64().unwrap(),
                b["count"].as_u64().unwrap(),
            )
        })
        .filter(|b| b.2 > 0)
        .collect()
}

/// A listener with backlog 16 that accepts nothing while 40 clients
/// connect: 17 handshakes complete, finding 0, 1, … 16 connections queued
/// (the kernel's queue is full past its limit), so the histogram holds
/// each of those once and reaches the 16 slot; the other 23 wait. A
/// listener that accepts each connection before the next arrives finds its
/// queue empty each time. BCC's text layout too.
#[test]
fn tcpsynbl_full_backlog_reaches_its_limit() {
    let ns = netns();
    let full = SocketAddr::from((Ipv4Addr::LOCALHOST, 5901));
    let accepting = SocketAddr::from((Ipv4Addr::LOCALHOST, 5902));
    let json = start(&["--json", "-P", "5901,5902"], "");
    let text = start(&["-P", "5901"], "");
    let (listener, clients) = sockets(&ns, full, 16, 40);
    connect_all(&clients, full);
    settle();
    let (server, clients2) = sockets(&ns, accepting, 24, 40);
    for c in &clients2 {
        c.connect(&accepting.into()).unwrap();
        drop(server.accept().unwrap());
    }
    let (json, text) = (stop(json), stop(text));
    drop((listener, clients, server, clients2));

    let hists = json.json();
    assert_eq!(hists.len(), 2, "{hists:#?}");
    let f = section(&hists, 16);
    assert_eq!(f["unit"], "backlog", "{f}");
    // The kernel takes handshakes while no more than 16 wait, so the 17th
    // finds 16 and the top slot is 16 -> 31. Two handshakes completing on
    // two CPUs at once may read the same length before either joins the
    // queue (the listener is not locked there): then one more completes,
    // and a length repeats. One at a time, each length 0 to 16 once.
    let b = buckets(f);
    assert_eq!(b.last().map(|b| (b.0, b.1)), Some((16, 31)), "{f}");
    let count = f["count"].as_u64().unwrap();
    assert!((17..=18).contains(&count), "{f}");
    if count == 17 {
        assert_eq!(
            b,
            [(0, 1, 2), (2, 3, 2), (4, 7, 4), (8, 15, 8), (16, 31, 1)],
            "{f}"
        );
        assert_eq!(f["total"], (0..=16).sum::<u64>(), "{f}");
    }
    // Each connection accepted before the next arrives: an empty queue.
    let a = section(&hists, 24);
    assert_eq!(buckets(a), [(0, 1, 40)], "{a}");
    assert_eq!(a["total"], 0, "{a}");

    let lines = &text.stdout;
    let at = lines
        .iter()
        .position(|l| l == "backlog_max = 16")
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert_eq!(
        lines[at + 1],
        "     backlog             : count    distribution",
        "{lines:#?}"
    );
    assert!(
        lines[at + 2..]
            .iter()
            .any(|l| l.starts_with("        16 -> 31         : 1 ")),
        "{lines:#?}"
    );
}

/// Each variant of the state-change hook (tp_btf, raw_tp, the classic
/// tracepoint) sees the same: 5 handshakes on a listener that accepts
/// nothing find 0 to 4 queued.
#[test]
fn tcpsynbl_hook_variants() {
    let _turn = testkit::one_at_a_time();
    let ns = netns();
    for (i, (disable, hook)) in [
        ("", "tp_btf inet_sock_set_state"),
        ("tp_btf", "raw_tp inet_sock_set_state"),
        ("tp_btf,raw_tp", "tracepoint sock:inet_sock_set_state"),
    ]
    .into_iter()
    .enumerate()
    {
        let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
        assert!(dry.status.success(), "{dry:?}");
        assert!(dry.stdout.join("\n").contains(hook), "{hook}: {dry:?}");
        let port = 5910 + i as u16;
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let tool = start(&["--json", "-P", &port.to_string()], disable);
        let (listener, clients) = sockets(&ns, addr, 8, 5);
        connect_all(&clients, addr);
        settle();
        let hists = stop(tool).json();
        drop((listener, clients));
        let h = section(&hists, 8);
        assert_eq!(h["count"], 5, "{hook}: {h}");
        // 0 to 4 waiting (at most: see the test above).
        assert!(h["total"].as_u64().unwrap() <= 1 + 2 + 3 + 4, "{hook}: {h}");
    }
}

/// -4 and -6 keep one family's listeners; --per-port splits by port, with
/// BCC's heading extended.
#[test]
fn tcpsynbl_families_and_ports() {
    let ns = netns();
    let v4 = SocketAddr::from((Ipv4Addr::LOCALHOST, 5920));
    let v6 = SocketAddr::from((Ipv6Addr::LOCALHOST, 5921));
    let ports = "5920,5921";
    let only4 = start(&["--json", "-4", "-P", ports], "");
    let only6 = start(&["--json", "-6", "-P", ports], "");
    let per_port = start(&["--per-port", "-P", ports], "");
    let (l4, c4) = sockets(&ns, v4, 12, 3);
    let (l6, c6) = sockets(&ns, v6, 12, 2);
    connect_all(&c4, v4);
    connect_all(&c6, v6);
    settle();
    let (only4, only6, per_port) = (stop(only4), stop(only6), stop(per_port));
    drop((l4, c4, l6, c6));
    let (only4, only6) = (only4.json(), only6.json());
    assert_eq!(only4.len(), 1, "{only4:#?}");
    assert_eq!(section(&only4, 12)["count"], 3, "{only4:#?}");
    assert_eq!(only6.len(), 1, "{only6:#?}");
    assert_eq!(section(&only6, 12)["count"], 2, "{only6:#?}");
    for port in [5920, 5921] {
        let heading = format!("backlog_max = 12, port = {port}");
        assert!(per_port.stdout.contains(&heading), "{:#?}", per_port.stdout);
    }
}

/// --per-container keys by the listener's cgroup (the process that made
/// it); --container keeps one container's listeners.
#[test]
fn tcpsynbl_per_container_keys_by_the_listeners_cgroup() {
    let docker = testkit::FakeContainer::docker();
    let (theirs, mine) = (5930u16, 5931u16);
    let ports = format!("{theirs},{mine}");
    let all = start(&["--json", "--per-container", "-P", &ports], "");
    let one = start(
        &[
            "--json",
            "--per-container",
            "-P",
            &ports,
            "--container",
            docker.short_id(),
        ],
        "",
    );
    // The container's listener, with 3 connections it never accepts.
    let script = format!(
        "import socket, sys\n\
         l = socket.socket()\n\
         l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         l.bind(('127.0.0.1', {theirs}))\n\
         l.listen(9)\n\
         cs = [socket.create_connection(('127.0.0.1', {theirs})) for _ in range(3)]\n\
         print('ready', flush=True)\n\
         sys.stdin.read()\n"
    );
    let mut child = testkit::spawn_ready(
        docker
            .adopt(Command::new("python3").args(["-c", &script]))
            .stdin(Stdio::piped()),
    );
    // The host's listener, with 2.
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, mine));
    let listener = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    listener.set_reuse_address(true).unwrap();
    listener.bind(&addr.into()).unwrap();
    listener.listen(9).unwrap();
    let clients: Vec<_> = (0..2)
        .map(|_| std::net::TcpStream::connect(addr).unwrap())
        .collect();
    let (all, one) = (stop(all).json(), stop(one).json());
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    drop((listener, clients));
    assert_eq!(all.len(), 2, "{all:#?}");
    assert_eq!(one.len(), 1, "{one:#?}");
    assert_eq!(one[0]["container"], docker.short_id(), "{one:#?}");
    assert_eq!(one[0]["count"], 3, "{one:#?}");
    assert!(one[0]["total"].as_u64().unwrap() <= 1 + 2, "{one:#?}");
    let host: Vec<&Value> = all
        .iter()
        .filter(|h| h["container"] != docker.short_id())
        .collect();
    assert_eq!(host.len(), 1, "{all:#?}");
    assert_eq!(host[0]["count"], 2, "{all:#?}");
}
