//! tcpdrop against drops of a known number: an nftables rule in a network
//! namespace of the test's own drops every SYN to a port, and counts them;
//! tcpdrop shows as many, with the netfilter reason where the kernel names
//! reasons, the addresses, the SYN flag and the kernel stack.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::process::Command;
use std::thread;
use std::time::Duration;

use testbed::Netns;
use testkit::{require_root, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcpdrop");

fn traced(args: &[&str]) -> Traced {
    require_root();
    Traced::start_command(Command::new(BIN).args(args))
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(300))
}

/// A connect to `addr` in `ns` that times out: its SYNs are dropped.
fn refused_connect(ns: &Netns, addr: SocketAddr) {
    let name = ns.name().to_string();
    thread::spawn(move || {
        Netns::enter(&name).unwrap();
        assert!(TcpStream::connect_timeout(&addr, Duration::from_millis(2500)).is_err());
    })
    .join()
    .unwrap();
}

#[test]
fn tcpdrop_counts_netfilter_drops() {
    let ns = Netns::new(&unique("td")).expect("creating a network namespace");
    ns.drop_port(6001).unwrap();
    let json = traced(&["--json", "-P", "6001"]);
    let text = traced(&[]);
    refused_connect(&ns, SocketAddr::from((Ipv4Addr::LOCALHOST, 6001)));
    let dropped = ns.dropped().unwrap();
    ns.stop_dropping().unwrap();
    let (json, text) = (stop(json), stop(text));
    // The first SYN and its retransmission after a second, at least.
    assert!(dropped >= 2, "{dropped}");
    let drops = json.json();
    assert_eq!(drops.len() as u64, dropped, "{drops:#?}");
    let netfilter = common_reason("NETFILTER_DROP");
    for d in &drops {
        assert_eq!(d["ip"], 4, "{d}");
        assert_eq!(d["saddr"], "127.0.0.1", "{d}");
        assert_eq!(d["dport"], 6001, "{d}");
        assert_eq!(d["flags"], "SYN", "{d}");
        if netfilter {
            assert_eq!(d["reason"], "NETFILTER_DROP", "{d}");
        }
        let stack: Vec<&str> = d["stack"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert!(
            stack.iter().any(|f| f.starts_with("nf_hook_slow")),
            "{stack:?}"
        );
    }
    // The text: BCC's header, a row per drop, its stack indented below.
    assert!(
        text.stdout[0].starts_with("TIME     PID     IP SADDR:SPORT"),
        "{:?}",
        text.stdout
    );
    let rows: Vec<&String> = text
        .stdout
        .iter()
        .filter(|l| l.contains("> 127.0.0.1:6001"))
        .collect();
    assert_eq!(rows.len() as u64, dropped, "{:?}", text.stdout);
    assert!(rows[0].contains(" (SYN) "), "{}", rows[0]);
    assert!(
        text.stdout
            .iter()
            .any(|l| l.starts_with("\tnf_hook_slow+0x")),
        "{:?}",
        text.stdout
    );
}

#[test]
fn tcpdrop_family_and_pid_filters() {
    let ns = Netns::new(&unique("td")).expect("creating a network namespace");
    ns.drop_port(6002).unwrap();
    let me = std::process::id();
    let all = traced(&["--json", "-P", "6002"]);
    let v4 = traced(&["--json", "-4", "-P", "6002"]);
    let v6 = traced(&["--json", "-6", "-P", "6002"]);
    let mine = traced(&["--json", "-P", "6002", "-p", &me.to_string()]);
    thread::scope(|s| {
        s.spawn(|| refused_connect(&ns, SocketAddr::from((Ipv4Addr::LOCALHOST, 6002))));
        s.spawn(|| refused_connect(&ns, SocketAddr::from((Ipv6Addr::LOCALHOST, 6002))));
    });
    let dropped = ns.dropped().unwrap();
    ns.stop_dropping().unwrap();
    let (all, v4, v6, mine) = (stop(all), stop(v4), stop(v6), stop(mine));
    let all = all.json();
    assert_eq!(all.len() as u64, dropped, "{all:#?}");
    // Each filtered run shows exactly the unfiltered run's drops of its kind.
    let count = |key: &str, value: u32| all.iter().filter(|d| d[key] == value).count();
    for (run, family) in [(v4.json(), 4), (v6.json(), 6)] {
        assert!(count("ip", family) >= 2, "{all:#?}");
        assert_eq!(run.len(), count("ip", family), "{run:#?}");
        assert!(run.iter().all(|d| d["ip"] == family), "{run:#?}");
    }
    // A first SYN is dropped where it is sent: in the connecting process
    // (the retransmissions in timer context, any process's).
    let ours = count("pid", me);
    assert!(ours >= 1, "{all:#?}");
    let mine = mine.json();
    assert_eq!(mine.len(), ours, "{mine:#?}");
    assert!(mine.iter().all(|d| d["pid"] == me), "{mine:#?}");
}

/// The filter matches the socket's cgroup, so it keeps the drops of a
/// container's connect, the first SYN's (in the connecting process) and its
/// retransmissions' (in timer context), and none of the host's. The SYNs
/// are dropped as they leave (an input drop's packet has no socket yet, and
/// so no cgroup: such drops are not a container's).
#[test]
fn tcpdrop_container_filter_keeps_its_sockets_drops() {
    let ns = Netns::new(&unique("td")).expect("creating a network namespace");
    ns.drop_port_on_output(6003).unwrap();
    let docker = testkit::FakeContainer::docker();
    let all = traced(&["--json", "-P", "6003"]);
    let theirs = traced(&["--json", "-P", "6003", "--container", docker.short_id()]);
    // The container's client says its port first, then connects.
    let client = "import socket\n\
                  s = socket.socket()\n\
                  s.bind(('127.0.0.1', 0))\n\
                  print(s.getsockname()[1], flush=True)\n\
                  s.settimeout(2.5)\n\
                  try:\n    s.connect(('127.0.0.1', 6003))\n\
                  except OSError:\n    pass\n";
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns.name(), "python3", "-c", client]);
    let out = thread::scope(|s| {
        let inside = s.spawn(|| docker.adopt(&mut cmd).output().unwrap());
        refused_connect(&ns, SocketAddr::from((Ipv4Addr::LOCALHOST, 6003)));
        inside.join().unwrap()
    });
    assert!(out.status.success(), "{out:?}");
    let port: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    ns.stop_dropping().unwrap();
    let (all, theirs) = (stop(all).json(), stop(theirs).json());
    let from = |p: u64| all.iter().filter(|d| d["sport"] == p).count();
    assert!(from(port) >= 2, "{port}: {all:#?}");
    assert!(
        from(port) < all.len(),
        "no drop of the host's connect: {all:#?}"
    );
    assert_eq!(theirs.len(), from(port), "{theirs:#?}");
    assert!(theirs.iter().all(|d| d["sport"] == port), "{theirs:#?}");
}

/// True if this kernel names drop reason `name` (5.17+ has reasons; the
/// netfilter one came later).
fn common_reason(name: &str) -> bool {
    let Ok(btf) = libbpf_rs::btf::Btf::from_vmlinux() else {
        return false;
    };
    let Some(reasons) = btf.type_by_name::<libbpf_rs::btf::types::Enum>("skb_drop_reason") else {
        return false;
    };
    let full = format!("SKB_DROP_REASON_{name}");
    let named = reasons
        .iter()
        .any(|m| m.name.is_some_and(|n| n.to_string_lossy() == full));
    named
}

#[test]
fn tcpdrop_dry_run_names_the_tracepoint() {
    require_root();
    let out = testkit::run(BIN, &["--dry-run", "--all-reasons"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stdout.join("\n").contains("tp_btf kfree_skb"),
        "{:?}",
        out.stdout
    );
}
