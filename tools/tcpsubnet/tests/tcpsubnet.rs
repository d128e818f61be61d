//! tcpsubnet against transfers of the test's own in network namespaces of
//! its own, to loopback addresses no other test uses (127.0.0.5 and on):
//! each subnet's bytes, summed over the intervals, are exactly what the
//! test sent there, in each output form.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

use serde_json::Value;
use testbed::Netns;
use testkit::{unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_tcpsubnet");

fn start(args: &[&str]) -> Traced {
    testkit::start_disabled(BIN, args, "")
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(1500))
}

/// `bytes` sent from a client to a server at `to` (bound in namespace
/// `ns`), the server reading them all.
fn send(ns: &Netns, to: SocketAddr, bytes: usize) {
    let name = ns.name().to_string();
    let (client, mut server) = thread::spawn(move || {
        Netns::enter(&name).unwrap();
        let listener = TcpListener::bind(to).unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (client, server)
    })
    .join()
    .unwrap();
    let reader = thread::spawn(move || {
        let mut all = Vec::new();
        server.read_to_end(&mut all).unwrap();
        all.len()
    });
    let mut client = client;
    let chunk = vec![7u8; 64 * 1024];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len());
        client.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
    drop(client);
    assert_eq!(reader.join().unwrap(), bytes);
}

/// The bytes of `subnet` over every interval of a --json run.
fn json_sum(lines: &[Value], subnet: &str) -> u64 {
    lines
        .iter()
        .filter(|l| l["subnet"] == subnet)
        .map(|l| l["bytes"].as_u64().unwrap())
        .sum()
}

/// 1,000,000 bytes to 127.0.0.5 and 300,000 to ::1 are counted under
/// their subnets, exactly, in --json, in BCC's text and in BCC's -J; a
/// subnet sent nothing shows no line.
#[test]
fn tcpsubnet_counts_the_bytes_sent_to_each_subnet() {
    let ns = Netns::new(&unique("sn")).expect("creating a network namespace");
    let subnets = "127.0.0.5/32,::1/128,192.0.2.0/24";
    let json = start(&["--json", subnets]);
    let text = start(&[subnets]);
    let bcc = start(&["-J", subnets]);
    send(
        &ns,
        SocketAddr::from((Ipv4Addr::new(127, 0, 0, 5), 5940)),
        1_000_000,
    );
    send(&ns, SocketAddr::from((Ipv6Addr::LOCALHOST, 5941)), 300_000);
    let (json, text, bcc) = (stop(json), stop(text), stop(bcc));

    let lines = json.json();
    assert_eq!(json_sum(&lines, "127.0.0.5/32"), 1_000_000, "{lines:#?}");
    assert_eq!(json_sum(&lines, "::1/128"), 300_000, "{lines:#?}");
    assert_eq!(json_sum(&lines, "192.0.2.0/24"), 0, "{lines:#?}");

    // BCC's banner and [date time] line; a line per subnet sent to.
    assert_eq!(
        text.stdout[0],
        "Tracing... Output every 1 secs. Hit Ctrl-C to end"
    );
    assert!(
        text.stdout.iter().any(|l| l.len() == 19
            && l.starts_with('[')
            && l.ends_with(']')
            && l.as_bytes()[3] == b'/'),
        "{:#?}",
        text.stdout
    );
    let text_sum = |subnet: &str| -> u64 {
        text.stdout
            .iter()
            .filter_map(|l| l.strip_prefix(&format!("{subnet:<21} ")))
            .map(|v| v.trim().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(text_sum("127.0.0.5/32"), 1_000_000, "{:#?}", text.stdout);
    assert_eq!(text_sum("::1/128"), 300_000, "{:#?}", text.stdout);
    assert!(
        !text.stdout.iter().any(|l| l.starts_with("192.0.2.0/24")),
        "{:#?}",
        text.stdout
    );

    let objects = bcc.json();
    assert!(!objects.is_empty(), "{:?}", bcc.stdout);
    for o in &objects {
        assert!(o["date"].is_string() && o["time"].is_string(), "{o}");
    }
    let bcc_sum = |subnet: &str| -> u64 {
        objects
            .iter()
            .filter_map(|o| o["entries"][subnet].as_u64())
            .sum()
    };
    assert_eq!(bcc_sum("127.0.0.5/32"), 1_000_000, "{objects:#?}");
    assert_eq!(bcc_sum("::1/128"), 300_000, "{objects:#?}");
}

/// The first subnet that holds the address takes the bytes (BCC's
/// order), and an IPv4 peer of a dual-stack IPv6 socket (::ffff:127.0.0.7)
/// counts under the IPv4 subnets; -f K shows KBytes.
#[test]
fn tcpsubnet_first_match_takes_the_bytes() {
    let ns = Netns::new(&unique("sn")).expect("creating a network namespace");
    let subnets = "127.0.0.6/31,127.0.0.6/32,127.0.0.7/32";
    let json = start(&["--json", subnets]);
    let kbytes = start(&["-f", "K", "-i", "10", subnets]);
    send(
        &ns,
        SocketAddr::from((Ipv4Addr::new(127, 0, 0, 6), 5942)),
        200_000,
    );
    let mapped = IpAddr::V6(Ipv4Addr::new(127, 0, 0, 7).to_ipv6_mapped());
    send(&ns, SocketAddr::new(mapped, 5943), 100_000);
    let (json, kbytes) = (stop(json), stop(kbytes));
    let lines = json.json();
    // 127.0.0.7 is in 127.0.0.6/31 too, which comes first.
    assert_eq!(json_sum(&lines, "127.0.0.6/31"), 300_000, "{lines:#?}");
    assert_eq!(json_sum(&lines, "127.0.0.6/32"), 0, "{lines:#?}");
    assert_eq!(json_sum(&lines, "127.0.0.7/32"), 0, "{lines:#?}");
    // One 10 s interval, ended by the stop: 300,000 bytes are 292 KBytes.
    assert!(
        kbytes
            .stdout
            .iter()
            .any(|l| l == &format!("{:<21} {:>6}", "SUBNET", "KBYTES")),
        "{:#?}",
        kbytes.stdout
    );
    assert!(
        kbytes
            .stdout
            .iter()
            .any(|l| l == &format!("{:<21} {:>6}", "127.0.0.6/31", 300_000 / 1024)),
        "{:#?}",
        kbytes.stdout
    );
}

/// The dry run names the hook this kernel offers: the socket layer's
/// tracepoint (6.3+), else fexit or kprobes on tcp_sendmsg.
#[test]
fn tcpsubnet_dry_run_names_its_hook() {
    let dry = testkit::run_with_env(BIN, &["--dry-run"], &[]);
    assert!(dry.status.success(), "{dry:?}");
    let out = dry.stdout.join("\n");
    assert!(
        out.contains("tp_btf sock_send_length")
            || out.contains("fexit tcp_sendmsg")
            || out.contains("kprobe tcp_sendmsg"),
        "{out}"
    );
}
