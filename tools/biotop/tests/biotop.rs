//! biotop against real block I/O: a dd under a unique name reads a known
//! amount from a loop device of the test's own.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use testkit::block::{Dd, Direct, LoopDevice};
use testkit::{require_root, run, stop_and_check_unloaded, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_biotop");
const READS: u64 = 40;

fn loop_device() -> LoopDevice {
    LoopDevice::new(env!("CARGO_TARGET_TMPDIR"), 8)
}

/// The rows of `comm`, summed over intervals.
fn totals(rows: &[Value], comm: &str) -> (u64, u64, Vec<Value>) {
    let mine: Vec<Value> = rows.iter().filter(|r| r["comm"] == comm).cloned().collect();
    let ios = mine.iter().map(|r| r["io"].as_u64().unwrap()).sum();
    let bytes = mine.iter().map(|r| r["bytes"].as_u64().unwrap()).sum();
    (ios, bytes, mine)
}

fn check_reads(env: &[(&str, &str)]) {
    let lo = loop_device();
    require_root();
    let dd = Dd::new("btr");
    let small = Dd::new("bts");
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "-d", lo.name(), "-r", "2"])
            .envs(env.iter().copied()),
    );
    let pid = dd.run(
        Path::new(&lo.dev),
        Direct::Read {
            bs: 16384,
            skip: 10,
            count: READS,
        },
    );
    small.run(
        Path::new(&lo.dev),
        Direct::Read {
            bs: 4096,
            skip: 0,
            count: 2,
        },
    );
    std::thread::sleep(Duration::from_millis(200));
    let f = stop_and_check_unloaded(tool);
    assert!(f.status.success(), "{f:?}");
    let rows = f.json();
    let (ios, bytes, mine) = totals(&rows, dd.comm());
    assert_eq!(ios, READS, "{rows:#?}");
    assert_eq!(bytes, READS * 16384, "{rows:#?}");
    for r in &mine {
        assert_eq!(r["pid"], pid, "{r}");
        assert_eq!(r["op"], "R", "{r}");
        assert_eq!(r["disk"], lo.name(), "{r}");
        assert_eq!(r["kbytes"], r["bytes"].as_u64().unwrap() / 1024, "{r}");
    }
    // Within each interval the busier process comes first (-s all).
    let mut by_time: std::collections::BTreeMap<String, Vec<&Value>> = Default::default();
    for r in &rows {
        by_time
            .entry(r["time"].as_str().unwrap().into())
            .or_default()
            .push(r);
    }
    for interval in by_time.values() {
        assert!(interval.len() <= 2, "-r 2: {interval:#?}");
        let ios: Vec<u64> = interval.iter().map(|r| r["io"].as_u64().unwrap()).collect();
        assert!(ios.windows(2).all(|w| w[0] >= w[1]), "{interval:#?}");
    }
}

#[test]
fn biotop_tops_the_process_with_its_kbytes() {
    check_reads(&[]);
}

/// Kernels without tp_btf and before 6.5: raw_tp, insert/issue/complete.
#[test]
fn biotop_raw_tp_fallback_counts_the_same() {
    check_reads(&[("BPFTOOLS_DISABLE", "tp_btf,block_io_start,block_io_done")]);
}

#[test]
fn biotop_text_table_each_interval() {
    let lo = loop_device();
    require_root();
    let dd = Dd::new("btt");
    let tool = Traced::start(BIN, &["-C", "1", "3"]);
    dd.run(
        Path::new(&lo.dev),
        Direct::Read {
            bs: 8192,
            skip: 0,
            count: 16,
        },
    );
    let f = tool.wait(Duration::from_secs(30));
    assert!(f.status.success(), "{f:?}");
    let headers = f.stdout.iter().filter(|l| l.starts_with("PID")).count();
    assert_eq!(headers, 3, "three intervals: {f:?}");
    assert_eq!(
        f.stdout.iter().filter(|l| l.contains(" loadavg: ")).count(),
        3
    );
    let words: Vec<&str> = f
        .stdout
        .iter()
        .find(|l| l.starts_with("PID"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        words,
        ["PID", "COMM", "D", "MAJ", "MIN", "DISK", "I/O", "Kbytes", "AVGms"]
    );
    let row = f
        .stdout
        .iter()
        .find(|l| l.contains(dd.comm()))
        .unwrap_or_else(|| panic!("{f:?}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    let dev = std::fs::read_to_string(format!("/sys/class/block/{}/dev", lo.name())).unwrap();
    let (major, minor) = dev.trim().split_once(':').unwrap();
    // 16 reads of 8 KiB: 128 Kbytes.
    assert_eq!(
        &cells[2..8],
        &["R", major, minor, lo.name(), "16", "128"][..],
        "{row}"
    );
    assert!(cells[8].parse::<f64>().is_ok(), "{row}");
    assert!(
        !f.stdout.concat().contains('\x1b'),
        "-C: no screen clearing"
    );
}

/// `--containers`: each process's rows name its container (the submitter's
/// cgroup, kept with the request), in the text and in JSON; `--container`
/// keeps the container's rows only.
#[test]
fn biotop_names_and_filters_each_rows_container() {
    use std::os::unix::fs::MetadataExt;
    let lo = loop_device();
    require_root();
    let (docker, pod) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::kubernetes(),
    );
    let (a, b) = (Dd::new("bca"), Dd::new("bcb"));
    let d = lo.name();
    let json = Traced::start(BIN, &["--json", "--containers", "-d", d, "-r", "100"]);
    let text = Traced::start(BIN, &["--containers", "-C", "-d", d, "-r", "100"]);
    let only = Traced::start(BIN, &["--json", "-d", d, "--container", docker.short_id()]);
    for (who, dd, count) in [(&docker, &a, 12), (&pod, &b, 7)] {
        let mut cmd = dd.command(
            Path::new(&lo.dev),
            Direct::Read {
                bs: 4096,
                skip: 0,
                count,
            },
        );
        assert!(who.adopt(&mut cmd).status().unwrap().success());
    }
    std::thread::sleep(Duration::from_millis(1200));
    let json = stop_and_check_unloaded(json);
    let (text, only) = (stop_and_check_unloaded(text), stop_and_check_unloaded(only));
    let rows = json.json();
    for (who, dd, count) in [(&docker, &a, 12), (&pod, &b, 7)] {
        let (ios, _, mine) = totals(&rows, dd.comm());
        assert_eq!(ios, count, "{rows:#?}");
        for r in &mine {
            assert_eq!(r["container"], who.short_id(), "{r}");
            assert_eq!(r["pod"].as_str(), who.pod.as_deref(), "{r}");
            assert_eq!(r["cgroup_id"], std::fs::metadata(&who.dir).unwrap().ino());
        }
        let line = text.stdout.iter().find(|l| l.contains(dd.comm()));
        assert!(
            line.is_some_and(|l| l.starts_with(who.short_id())),
            "{:?}",
            text.stdout
        );
    }
    assert!(
        text.stdout
            .iter()
            .any(|l| l.starts_with("CONTAINER    PID")),
        "{:?}",
        text.stdout
    );
    let only = only.json();
    assert_eq!(totals(&only, a.comm()).0, 12, "{only:#?}");
    assert!(only.iter().all(|r| r["comm"] == a.comm()), "{only:#?}");
}

#[test]
fn biotop_dry_run_names_its_hooks() {
    require_root();
    let f = run(BIN, &["--dry-run"]);
    assert!(f.status.success(), "{f:?}");
    assert!(
        f.stdout.join("\n").contains("tp_btf block_rq_issue"),
        "{f:?}"
    );
}
