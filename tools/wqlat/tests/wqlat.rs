//! wqlat against writeback work of the test's own: rounds of a 4 KiB write
//! and syncfs() on an ext4 of the test's own (a loop device); each
//! syncfs() queues the device's flusher work (wb_workfn) on the
//! `writeback` workqueue and waits for it to run.

use std::io::Write;
use std::os::fd::AsRawFd;

use serde_json::Value;
use testkit::block::Mount;
use testkit::{require_root, stop_and_check_unloaded, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_wqlat");
const TMP: &str = env!("CARGO_TARGET_TMPDIR");
const ROUNDS: u64 = 20;

/// The tool (`args`, hooks in `disable` off) while ROUNDS rounds of a
/// write and syncfs() run.
fn synced(args: &[&str], disable: &str) -> Finished {
    require_root();
    let mount = Mount::ext4(TMP, 64);
    let tool = Traced::start_command(
        std::process::Command::new(BIN)
            .args(args)
            .env("BPFTOOLS_DISABLE", disable),
    );
    let mut file = std::fs::File::create(mount.dir.join("dirty")).unwrap();
    for _ in 0..ROUNDS {
        file.write_all(&[0x5a; 4096]).unwrap();
        // SAFETY: syncfs on an open descriptor of ours.
        assert_eq!(unsafe { libc::syncfs(file.as_raw_fd()) }, 0);
    }
    drop(file);
    let f = stop_and_check_unloaded(tool);
    assert!(f.status.success(), "{f:?}");
    f
}

fn count(h: &Value) -> u64 {
    h["count"].as_u64().unwrap()
}

/// The flusher's work on the writeback workqueue: at least one wait per
/// round, each bucket's bounds in the unit.
fn check_writeback(hists: &[Value]) {
    let wb: Vec<&Value> = hists
        .iter()
        .filter(|h| h["wqname"] == "writeback" && h["function"] == "wb_workfn")
        .collect();
    assert_eq!(wb.len(), 1, "{hists:?}");
    assert!(count(wb[0]) >= ROUNDS, "{}", wb[0]);
    let in_buckets: u64 = wb[0]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .sum();
    assert_eq!(in_buckets, count(wb[0]), "{}", wb[0]);
}

#[test]
fn wqlat_per_workqueue_and_function_shows_the_flushers_work() {
    let f = synced(&["--json", "-W", "-F"], "");
    check_writeback(&f.json());
}

/// -w: that workqueue's work alone, in one histogram; BCC's text.
#[test]
fn wqlat_one_workqueue_in_bccs_text() {
    let f = synced(&["-w", "writeback", "-W"], "");
    let at = f
        .stdout
        .iter()
        .position(|l| l == "wqname = writeback")
        .unwrap_or_else(|| panic!("{f:?}"));
    assert_eq!(
        f.stdout[at + 1].trim_end(),
        "     usecs               : count    distribution",
        "{f:?}"
    );
    let counted: u64 = f.stdout[at + 2..]
        .iter()
        .take_while(|l| l.contains("->"))
        .map(|l| {
            l.split(':')
                .nth(1)
                .and_then(|c| c.split_whitespace().next())
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert!(counted >= ROUNDS, "{f:?}");
    // No other workqueue's section.
    assert_eq!(
        f.stdout
            .iter()
            .filter(|l| l.starts_with("wqname = "))
            .count(),
        1,
        "{f:?}"
    );
}

/// Without -W: one histogram of every workqueue's work, the flusher's
/// among it; -N counts in nanoseconds.
#[test]
fn wqlat_one_histogram_in_nanoseconds() {
    let f = synced(&["--json", "-N"], "");
    let hists = f.json();
    assert_eq!(hists.len(), 1, "{f:?}");
    assert_eq!(hists[0]["unit"], "nsecs", "{f:?}");
    assert!(count(&hists[0]) >= ROUNDS, "{f:?}");
    assert!(hists[0].get("wqname").is_none(), "{f:?}");
}

/// tp_btf and raw_tp see the same work.
#[test]
fn wqlat_hook_variants() {
    for (disable, hook) in [
        ("", "tp_btf workqueue_queue_work"),
        ("tp_btf", "raw_tp workqueue_queue_work"),
    ] {
        let f = synced(&["--json", "-W", "-F", "-v"], disable);
        assert!(f.stderr.contains(hook), "{hook}: {}", f.stderr);
        check_writeback(&f.json());
    }
}
