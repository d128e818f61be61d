//! runqslower against a crowded CPU: three spinners pinned to CPU 0 take
//! turns on it, each waiting for the others' slices, over 1 ms each time.
//! One crowd at a time: another test's would take turns with it.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, Finished, Spinners, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_runqslower");
const SPINNERS: usize = 3;

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn crowd() -> Spinners {
    Spinners::on_cpu(0, SPINNERS, |_| ())
}

/// Lets the crowd contend for `secs`, then stops the tools.
fn contend(tools: Vec<Traced>) -> Vec<Finished> {
    std::thread::sleep(Duration::from_millis(1500));
    tools
        .into_iter()
        .map(|t| testkit::settle_and_stop(t, Duration::from_millis(100)))
        .collect()
}

/// Every spinner waited over the threshold, on CPU 0, and each wait's
/// previous task (-P) is often another spinner: a fifth at least, as on a
/// busy machine (a build beside the tests) this test's own thread, the
/// tool and the kernel's threads run on CPU 0 between the spinners too.
fn crowd_seen(events: &[Value], pids: &[u32], min_us: u64) {
    let set: HashSet<u64> = pids.iter().map(|&p| p as u64).collect();
    for pid in pids {
        assert!(
            events.iter().any(|e| e["tid"] == *pid),
            "no wait of spinner {pid}: {events:#?}"
        );
    }
    for e in events {
        assert!(set.contains(&e["tid"].as_u64().unwrap()), "{e}");
        assert_eq!(e["pid"], e["tid"], "{e}");
        assert_eq!(e["comm"], "sh", "{e}");
        assert_eq!(e["cpu"], 0, "{e}");
        assert!(e["latency_us"].as_u64().unwrap() >= min_us, "{e}");
    }
    let by_spinner = events
        .iter()
        .filter(|e| set.contains(&e["prev_tid"].as_u64().unwrap()))
        .count();
    assert!(by_spinner * 5 > events.len(), "{events:#?}");
}

fn crowd_variant(disable: &str) {
    let _serial = testkit::one_at_a_time();
    let crowd = crowd();
    std::thread::sleep(Duration::from_millis(100));
    let list = crowd.list();
    let json = start(&["--json", "-P", "-p", &list, "1000"], disable);
    let text = start(&["-P", "-p", &list, "1000"], disable);
    let f = contend(vec![json, text]);
    crowd_seen(&f[0].json(), &crowd.pids(), 1000);
    // BCC's text: TIME COMM TID LAT(us) PREV COMM PREV TID.
    assert_eq!(
        f[1].stdout[0],
        "TIME     COMM             TID           LAT(us) PREV COMM        PREV TID"
    );
    let line = f[1].stdout[1].split_whitespace().collect::<Vec<_>>();
    assert_eq!(line[1], "sh", "{:?}", f[1].stdout);
    assert!(crowd.pids().contains(&line[2].parse().unwrap()), "{line:?}");
    assert!(line[3].parse::<u64>().unwrap() >= 1000, "{line:?}");
}

#[test]
fn runqslower_sees_the_waits_of_a_crowded_cpu() {
    crowd_variant("");
}

/// raw_tp, a hash map by thread, where tp_btf and task storage exist too.
#[test]
fn runqslower_raw_tp_variant() {
    require_root();
    crowd_variant("tp_btf");
}

/// -t: one thread's waits only; the default threshold (10 ms) shows none
/// of the others'.
#[test]
fn runqslower_tid_filter() {
    let _serial = testkit::one_at_a_time();
    let crowd = crowd();
    std::thread::sleep(Duration::from_millis(100));
    let one = crowd.pids()[0];
    let tool = start(&["--json", "-t", &one.to_string(), "1000"], "");
    let events = contend(vec![tool])[0].json();
    assert!(!events.is_empty(), "no wait of {one}");
    assert!(events.iter().all(|e| e["tid"] == one), "{events:#?}");
}

/// --container: the waits of a container's tasks only, named.
#[test]
fn runqslower_container_filter() {
    let _serial = testkit::one_at_a_time();
    let docker = testkit::FakeContainer::docker();
    let inside = Spinners::on_cpu(0, SPINNERS, |c| {
        docker.adopt(c);
    });
    let outside = crowd();
    std::thread::sleep(Duration::from_millis(100));
    let tool = start(
        &[
            "--json",
            "--containers",
            "--container",
            docker.short_id(),
            "1000",
        ],
        "",
    );
    let events = contend(vec![tool])[0].json();
    let theirs: HashSet<u64> = inside.pids().iter().map(|&p| p as u64).collect();
    assert!(!events.is_empty(), "no wait inside the container");
    for e in &events {
        assert!(
            theirs.contains(&e["tid"].as_u64().unwrap()),
            "{e} ({:?} outside)",
            outside.pids()
        );
        assert_eq!(e["container"], docker.short_id(), "{e}");
    }
}

#[test]
fn runqslower_dry_run_names_the_switch() {
    require_root();
    let dry = testkit::run(BIN, &["--dry-run"]);
    assert!(dry.status.success(), "{dry:?}");
    assert!(dry.stdout.join("\n").contains("sched_switch"), "{dry:?}");
}
