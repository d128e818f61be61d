//! writeback against real writeback: 4 MiB dirtied on an ext4 of the
//! test's own (a loop device), then synced (syncfs): the flusher's rounds
//! on that device write those pages, for reason `sync`. (4 MiB: under the
//! background threshold of a small guest, which would write 16 MiB itself
//! before the sync, for reason `background`.)

use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::thread;
use std::time::Duration;

use serde_json::Value;
use testkit::block::Mount;
use testkit::{require_root, stop_and_check_unloaded, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_writeback");
const TMP: &str = env!("CARGO_TARGET_TMPDIR");
const MIB: u64 = 4;

/// Runs the tool with `args` while 4 MiB are written to a fresh file
/// system and synced; the rounds on its device, and the device.
fn synced(args: &[&str]) -> (Finished, Vec<Value>, String) {
    require_root();
    let mount = Mount::ext4(TMP, 64);
    let dev = std::fs::metadata(&mount.dir).unwrap().dev();
    let device = format!("{}:{}", libc::major(dev), libc::minor(dev));
    let tool = Traced::start(BIN, args);
    let file = mount.dir.join("dirty");
    std::fs::write(&file, vec![0x5au8; (MIB << 20) as usize]).unwrap();
    let status = Command::new("sync").arg("-f").arg(&file).status().unwrap();
    assert!(status.success());
    thread::sleep(Duration::from_millis(300));
    let f = stop_and_check_unloaded(tool);
    assert!(f.status.success(), "{f:?}");
    let rounds = if args.contains(&"--json") {
        f.json()
            .into_iter()
            .filter(|r| r["device"] == device.as_str())
            .collect()
    } else {
        Vec::new()
    };
    (f, rounds, device)
}

/// The pages add up on the device in every run. The flusher's periodic
/// wakeup (every 5 s) can find a new device over its own background
/// threshold (near nothing for a device with no history) and write them
/// before the sync, for reason `background`: the sync's own round is then
/// looked for in a new run, three at most.
#[test]
fn writeback_sync_shows_the_pages_written() {
    for attempt in 1..=3 {
        let (f, rounds, device) = synced(&["--json"]);
        let pages: i64 = rounds.iter().map(|r| r["pages"].as_i64().unwrap()).sum();
        let want = (MIB * 256) as i64;
        // ext4 writes a few pages of its own beside the file's.
        assert!(
            (want * 95 / 100..=want * 110 / 100).contains(&pages),
            "{pages} pages written on {device} for {want} dirtied: {rounds:#?}\n{}",
            f.stdout.join("\n")
        );
        for r in &rounds {
            assert!(r["latency_ns"].as_u64().is_some(), "{r}");
            assert!(r["comm"].as_str().is_some_and(|c| !c.is_empty()), "{r}");
        }
        let synced = rounds
            .iter()
            .any(|r| r["reason"] == "sync" && r["pages"].as_i64() > Some(0));
        if synced {
            return;
        }
        assert!(attempt < 3, "no sync round wrote pages: {rounds:#?}");
    }
}

#[test]
fn writeback_text_has_bpftraces_columns() {
    let (f, _, device) = synced(&[]);
    assert_eq!(
        f.stdout[0].split_whitespace().collect::<Vec<_>>(),
        ["TIME", "DEVICE", "PAGES", "REASON", "ms"]
    );
    let mine: Vec<&String> = f
        .stdout
        .iter()
        .filter(|l| l.split_whitespace().nth(1) == Some(device.as_str()))
        .collect();
    assert!(!mine.is_empty(), "{:#?}", f.stdout);
    for line in mine {
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells.len(), 5, "{line}");
        assert_eq!(cells[0].len(), 8, "HH:MM:SS: {line}");
        cells[2].parse::<i64>().unwrap();
        cells[4].parse::<f64>().unwrap();
    }
}

/// -m: rounds shorter than the threshold are left out (none takes 100 s).
#[test]
fn writeback_min_ms_leaves_out_shorter_rounds() {
    let (_, rounds, _) = synced(&["--json", "-m", "100000"]);
    assert!(rounds.is_empty(), "{rounds:#?}");
}

/// -c: the rounds of that cgroup's dirty pages, or its descendants'. The
/// root's take in every round of the test's sync; a fresh cgroup of the
/// test's own, none (its pages are charged where the test runs).
#[test]
fn writeback_cgroup_filter_judges_the_rounds_cgroup() {
    let root = testkit::cgroup2_root();
    let (_, rounds, device) = synced(&["--json", "-c", root.to_str().unwrap()]);
    assert!(!rounds.is_empty(), "the root cgroup: no round on {device}");
    let empty = root.join(testkit::unique("wb-"));
    std::fs::create_dir(&empty).unwrap();
    let (_, rounds, _) = synced(&["--json", "-c", empty.to_str().unwrap()]);
    let _ = std::fs::remove_dir(&empty);
    assert!(rounds.is_empty(), "{rounds:#?}");
}

/// raw_tp where tp_btf is missing (forced here).
#[test]
fn writeback_raw_tp_variant() {
    require_root();
    let mount = Mount::ext4(TMP, 64);
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "-v"])
            .env("BPFTOOLS_DISABLE", "tp_btf"),
    );
    let file = mount.dir.join("dirty");
    std::fs::write(&file, vec![1u8; 1 << 20]).unwrap();
    assert!(Command::new("sync")
        .arg("-f")
        .arg(&file)
        .status()
        .unwrap()
        .success());
    thread::sleep(Duration::from_millis(300));
    let f = stop_and_check_unloaded(tool);
    assert!(
        f.stderr.contains("raw_tp writeback_written"),
        "{}",
        f.stderr
    );
    let pages: i64 = f.json().iter().map(|r| r["pages"].as_i64().unwrap()).sum();
    assert!(pages >= 256, "{pages} pages for 1 MiB: {:#?}", f.stdout);
}
