//! tcptracer against connections of the test's own, in a network namespace
//! of its own: 20 loopback connections, each made by a bash of its own
//! (`/dev/tcp`, closed as the bash exits) and accepted and closed by a
//! thread of this process: 20 connects by the bashes, 20 accepts by this
//! process, and 40 closes, each by its end's process.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::thread;
use std::time::Duration;

use serde_json::Value;
use testbed::Netns;
use testkit::{unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcptracer");

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(300))
}

/// The namespace's inode number, as the tool's -N takes it.
fn inode(ns: &Netns) -> u64 {
    std::fs::metadata(format!("/run/netns/{}", ns.name()))
        .unwrap()
        .ino()
}

/// One connection: the client's pid and port.
struct Made {
    client: u32,
    port: u16,
}

/// `n` connections to 127.0.0.1:`port` in `ns`, each from a bash of its own
/// and accepted, then closed, by a thread of this process once the bash
/// has gone.
fn connections(ns: &Netns, port: u16, n: usize) -> Vec<Made> {
    let name = ns.name().to_string();
    thread::spawn(move || {
        Netns::enter(&name).unwrap();
        let listener = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).unwrap();
        (0..n)
            .map(|_| {
                // The thread is in the namespace: so is the bash it starts.
                let mut bash = Command::new("bash")
                    .args(["-c", &format!("exec 3<>/dev/tcp/127.0.0.1/{port}")])
                    .spawn()
                    .unwrap();
                let (stream, peer) = listener.accept().unwrap();
                assert!(bash.wait().unwrap().success());
                // The client's FIN first (its exit), then ours.
                thread::sleep(Duration::from_millis(20));
                drop(stream);
                Made {
                    client: bash.id(),
                    port: peer.port(),
                }
            })
            .collect()
    })
    .join()
    .unwrap()
}

/// The events of the connections to `port`, by (type, pid, sport, dport).
fn tally(events: &[Value], port: u16) -> BTreeMap<(String, u64, u64, u64), usize> {
    let mut seen = BTreeMap::new();
    for e in events {
        if e["sport"] != port && e["dport"] != port {
            continue;
        }
        let key = (
            e["type"].as_str().unwrap().to_string(),
            e["pid"].as_u64().unwrap(),
            e["sport"].as_u64().unwrap(),
            e["dport"].as_u64().unwrap(),
        );
        *seen.entry(key).or_insert(0) += 1;
    }
    seen
}

/// Each connection's connect and close by its bash, accept and close by
/// this process: once each, nothing else.
fn check(events: &[Value], made: &[Made], port: u16) {
    let me = u64::from(std::process::id());
    let mut want = BTreeMap::new();
    for m in made {
        let (client, theirs) = (u64::from(m.client), u64::from(m.port));
        let port = u64::from(port);
        want.insert(("connect".to_string(), client, theirs, port), 1);
        want.insert(("close".to_string(), client, theirs, port), 1);
        want.insert(("accept".to_string(), me, port, theirs), 1);
        want.insert(("close".to_string(), me, port, theirs), 1);
    }
    assert_eq!(tally(events, port), want, "{events:#?}");
    for e in events
        .iter()
        .filter(|e| e["sport"] == port || e["dport"] == port)
    {
        assert_eq!(e["ip"], 4, "{e}");
        assert_eq!(e["uid"], 0, "{e}");
        assert_eq!(e["saddr"], "127.0.0.1", "{e}");
        assert_eq!(e["daddr"], "127.0.0.1", "{e}");
        let comm = if e["pid"] == me { None } else { Some("bash") };
        if let Some(c) = comm {
            assert_eq!(e["comm"], c, "{e}");
        }
    }
}

#[test]
fn tcptracer_shows_connects_accepts_and_closes_with_their_processes() {
    let _turn = testkit::one_at_a_time();
    let ns = Netns::new(&unique("tt")).expect("creating a network namespace");
    let netns = inode(&ns).to_string();
    let json = start(&["--json", "-N", &netns], "");
    let text = start(&["-t", "-N", &netns], "");
    let verbose = start(&["-v", "-N", &netns], "");
    let elsewhere = start(&["--json", "-N", "1"], "");
    let other_user = start(&["--json", "-u", "4242", "-N", &netns], "");
    let six = start(&["--json", "-6", "-N", &netns], "");
    let made = connections(&ns, 7300, 20);
    let (json, text, verbose, elsewhere, six, other_user) = (
        stop(json),
        stop(text),
        stop(verbose),
        stop(elsewhere),
        stop(six),
        stop(other_user),
    );
    let events = json.json();
    check(&events, &made, 7300);
    for e in &events {
        assert_eq!(e["netns"].to_string(), netns, "{e}");
    }
    // -N of another namespace, -6 and -u: none of them.
    assert!(elsewhere
        .json()
        .iter()
        .all(|e| e["sport"] != 7300 && e["dport"] != 7300));
    assert!(six.json().is_empty(), "{:?}", six.stdout);
    // -u of a uid no process has: nothing.
    assert!(other_user.json().is_empty(), "{:?}", other_user.stdout);
    // BCC's text: T PID COMM IP SADDR DADDR SPORT DPORT, C, A and X.
    assert_eq!(
        text.stdout[0],
        "TIME(s)   T  PID    COMM             IP SADDR            DADDR            SPORT  DPORT"
    );
    let first = &made[0];
    let line = |kind: &str, pid: u32, sport: u16, dport: u16| {
        text.stdout.iter().any(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() == 9
                && w[1] == kind
                && w[2] == pid.to_string()
                && w[5..]
                    == [
                        "127.0.0.1",
                        "127.0.0.1",
                        &sport.to_string(),
                        &dport.to_string(),
                    ][..]
        })
    };
    assert!(
        line("C", first.client, first.port, 7300),
        "{:?}",
        text.stdout
    );
    assert!(
        line("A", std::process::id(), 7300, first.port),
        "{:?}",
        text.stdout
    );
    assert!(
        line("X", first.client, first.port, 7300),
        "{:?}",
        text.stdout
    );
    // -v: the type spelled out, and the namespace last.
    assert!(
        verbose.stdout[0].starts_with("TYPE         PID"),
        "{:?}",
        verbose.stdout
    );
    assert!(
        verbose.stdout[1..]
            .iter()
            .filter(|l| l.starts_with("connect "))
            .all(|l| l.ends_with(&netns)),
        "{:?}",
        verbose.stdout
    );
    assert_eq!(
        verbose
            .stdout
            .iter()
            .filter(|l| l.starts_with("close "))
            .count(),
        40,
        "{:?}",
        verbose.stdout
    );
}

/// -p: a process's own connections, its accepts and closes, not the
/// bashes'.
#[test]
fn tcptracer_filters_by_process() {
    let _turn = testkit::one_at_a_time();
    let ns = Netns::new(&unique("tt")).expect("creating a network namespace");
    let me = std::process::id().to_string();
    let tool = start(&["--json", "-p", &me], "");
    let made = connections(&ns, 7301, 3);
    let events = stop(tool).json();
    let mine = tally(&events, 7301);
    assert_eq!(mine.len(), 6, "{mine:#?}");
    assert!(mine
        .keys()
        .all(|(_, pid, _, _)| *pid == u64::from(std::process::id())));
    assert_eq!(made.len(), 3);
}

/// Each variant: the state change at tp_btf, raw_tp or the classic
/// tracepoint, the accept calls at their own tracepoints or at tp_btf
/// sys_exit; each on its own run of connections.
#[test]
fn tcptracer_hook_variants() {
    let _turn = testkit::one_at_a_time();
    let variants = [
        ("", "tp_btf inet_sock_set_state", 7310),
        ("tp_btf", "raw_tp inet_sock_set_state", 7311),
        ("tracepoint", "tp_btf sys_exit", 7312),
    ];
    for (disable, hook, port) in variants {
        let ns = Netns::new(&unique("tt")).expect("creating a network namespace");
        let netns = inode(&ns).to_string();
        let tool = start(&["--json", "-v", "-N", &netns], disable);
        let made = connections(&ns, port, 4);
        let done = stop(tool);
        assert!(done.stderr.contains(hook), "{hook}: {}", done.stderr);
        check(&done.json(), &made, port);
    }
}
