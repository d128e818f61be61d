//! biopattern against I/O of the test's own on a loop device of its own:
//! sequential O_DIRECT reads (dd) show as sequential, reads at scattered
//! offsets as random, each with its exact count and bytes.

use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use testkit::block::{Dd, Direct, LoopDevice};
use testkit::{settle_and_stop, start_disabled};

const BIN: &str = env!("CARGO_BIN_EXE_biopattern");
const READS: u64 = 64;
const BS: usize = 4096;

/// `READS` O_DIRECT reads of `BS` bytes at offsets that never follow one
/// another (a stride that wraps around the 8 MiB device).
fn scattered_reads(dev: &str) {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(dev)
        .unwrap();
    let layout = std::alloc::Layout::from_size_align(BS, BS).unwrap();
    // SAFETY: a non-zero size; freed below with the same layout.
    let ptr = unsafe { std::alloc::alloc(layout) };
    assert!(!ptr.is_null());
    // SAFETY: ptr holds BS bytes, aligned for O_DIRECT, ours until freed.
    let buf = unsafe { std::slice::from_raw_parts_mut(ptr, BS) };
    let blocks = (8 << 20) / BS as u64;
    for i in 0..READS {
        let block = (i * 37 + 11) % blocks;
        f.read_exact_at(buf, block * BS as u64).unwrap();
    }
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(ptr, layout) };
}

/// The loop device's one row (the tool printed once, at its end).
fn row_of(rows: &[Value], disk: &str) -> Value {
    let mine: Vec<&Value> = rows.iter().filter(|r| r["disk"] == disk).collect();
    assert_eq!(mine.len(), 1, "{rows:#?}");
    mine[0].clone()
}

fn check(disable: &str) {
    let lo = LoopDevice::new(env!("CARGO_TARGET_TMPDIR"), 8);
    let args = ["--json", "-d", lo.name()];
    // Sequential: one dd read after another from block 16.
    let tool = start_disabled(BIN, &args, disable);
    Dd::new("bps").run(
        Path::new(&lo.dev),
        Direct::Read {
            bs: BS as u64,
            skip: 16,
            count: READS,
        },
    );
    let seq = row_of(
        &settle_and_stop(tool, Duration::from_millis(200)).json(),
        lo.name(),
    );
    // The disk's first completion only marks where it ended.
    let counted = READS - 1;
    assert_eq!(seq["count"], counted, "{disable}: {seq}");
    assert_eq!(seq["sequential"], counted, "{disable}: {seq}");
    assert_eq!(seq["sequential_pct"], 100, "{disable}: {seq}");
    assert_eq!(seq["bytes"], counted * BS as u64, "{disable}: {seq}");
    // Random: the same number of reads, scattered.
    let tool = start_disabled(BIN, &args, disable);
    scattered_reads(&lo.dev);
    let rnd = row_of(
        &settle_and_stop(tool, Duration::from_millis(200)).json(),
        lo.name(),
    );
    assert_eq!(rnd["count"], counted, "{disable}: {rnd}");
    assert_eq!(rnd["random"], counted, "{disable}: {rnd}");
    assert_eq!(rnd["random_pct"], 100, "{disable}: {rnd}");
}

#[test]
fn biopattern_tells_sequential_from_random() {
    check("");
}

/// raw_tp, and the classic tracepoint, where tp_btf is missing.
#[test]
fn biopattern_hook_variants() {
    for (disable, hook) in [
        ("tp_btf", "raw_tp block_rq_complete"),
        ("tp_btf,raw_tp", "tracepoint block:block_rq_complete"),
    ] {
        let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
        assert!(dry.status.success(), "{dry:?}");
        assert!(dry.stdout.join("\n").contains(hook), "{hook}: {dry:?}");
        check(disable);
    }
}

/// Intervals: a line per disk per interval under one header, with -T the
/// time first; the intervals add up to the whole.
#[test]
fn biopattern_prints_a_line_per_interval() {
    let lo = LoopDevice::new(env!("CARGO_TARGET_TMPDIR"), 8);
    let tool = start_disabled(BIN, &["-T", "-d", lo.name(), "1"], "");
    for i in 0..3 {
        Dd::new("bpi").run(
            Path::new(&lo.dev),
            Direct::Read {
                bs: BS as u64,
                skip: 100 * i,
                count: 20,
            },
        );
        std::thread::sleep(Duration::from_millis(1100));
    }
    let f = settle_and_stop(tool, Duration::from_millis(100));
    assert_eq!(
        f.stdout[0], "TIME     DISK     %RND  %SEQ    COUNT     KBYTES",
        "{:?}",
        f.stdout
    );
    let lines: Vec<Vec<&str>> = f.stdout[1..]
        .iter()
        .map(|l| l.split_whitespace().collect())
        .filter(|c: &Vec<&str>| c.get(1) == Some(&lo.name()))
        .collect();
    assert!(lines.len() >= 3, "{:?}", f.stdout);
    let count: u64 = lines.iter().map(|c| c[4].parse::<u64>().unwrap()).sum();
    // 60 reads; the first only marks where the disk was.
    assert_eq!(count, 59, "{:?}", f.stdout);
    assert!(lines.iter().all(|c| c[0].len() == 8 && c[0].contains(':')));
}
