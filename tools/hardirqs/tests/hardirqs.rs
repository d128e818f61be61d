//! hardirqs against direct reads of a file on the scratch directory's disk:
//! its completion interrupts are the busiest handler in /proc/interrupts
//! over the reads, and the tool counts them: at least as many as the kernel
//! counted while it ran (but for a shared line's IRQ_NONE), at most as
//! many as over its whole life.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use testkit::block::{Dd, Direct};
use testkit::{require_root, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_hardirqs");
const READS: u64 = 400;

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(100))
}

/// /proc/interrupts' handlers (the last column of the numbered lines),
/// with their counts summed over the CPUs.
fn proc_interrupts() -> HashMap<String, u64> {
    let text = std::fs::read_to_string("/proc/interrupts").unwrap();
    let cpus = text.lines().next().unwrap().split_whitespace().count();
    let mut out = HashMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() || f[0].trim_end_matches(':').parse::<u32>().is_err() {
            continue;
        }
        let n: u64 = f[1..=cpus]
            .iter()
            .filter_map(|c| c.parse::<u64>().ok())
            .sum();
        // Shared lines list their handlers comma-separated.
        for name in f.last().unwrap().split(',') {
            *out.entry(name.to_string()).or_default() += n;
        }
    }
    out
}

/// Reads of a file on the scratch directory's disk, O_DIRECT: one request
/// and one completion each (the file written and synced first).
fn disk_reads() {
    let scratch = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let file = scratch.join(testkit::unique("hardirqs-"));
    std::fs::write(&file, vec![1u8; (READS * 4096) as usize]).unwrap();
    std::fs::File::open(&file).unwrap().sync_all().unwrap();
    Dd::system().run(
        &file,
        Direct::Read {
            bs: 4096,
            skip: 0,
            count: READS,
        },
    );
    let _ = std::fs::remove_file(&file);
}

fn count_of(sections: &[Value], name: &str) -> u64 {
    sections
        .iter()
        .find(|s| s["hardirq"] == name)
        .map_or(0, |s| s["count"].as_u64().unwrap())
}

fn disk_seen(disable: &str) {
    // Two windows of the kernel's own counts: the outer one holds the
    // tools' whole lives, the inner one lies within them (the tools load
    // their programs in between: their binaries' reads interrupt too).
    let outer_before = proc_interrupts();
    let counted = start(&["--json", "-C"], disable);
    let timed = start(&["--json"], disable);
    let text = start(&[], disable);
    let before = proc_interrupts();
    disk_reads();
    let after = proc_interrupts();
    let (counted, timed, text) = (stop(counted), stop(timed), stop(text));
    let outer_after = proc_interrupts();
    let delta = |a: &HashMap<String, u64>, b: &HashMap<String, u64>, n: &str| {
        a.get(n).copied().unwrap_or(0) - b.get(n).copied().unwrap_or(0)
    };
    // The disk's handler: the one the reads made busiest.
    let (disk, ran) = after
        .keys()
        .map(|n| (n.clone(), delta(&after, &before, n)))
        .max_by_key(|(_, d)| *d)
        .unwrap();
    assert!(
        ran >= READS / 4,
        "{disk}: {ran} interrupts for {READS} reads"
    );
    let counted = counted.json();
    let n = count_of(&counted, &disk);
    let most = delta(&outer_after, &outer_before, &disk);
    assert!(
        n * 10 >= ran * 9 && n <= most,
        "{disk}: {n} seen; the kernel counted {ran} while the tools ran, {most} over their \
         lives: {counted:#?}"
    );
    for s in &counted {
        let name = s["hardirq"].as_str().unwrap();
        let kernel = delta(&outer_after, &outer_before, name);
        assert!(s["count"].as_u64().unwrap() <= kernel, "{s} vs {kernel}");
    }
    let timed = timed.json();
    let t = timed
        .iter()
        .find(|s| s["hardirq"] == disk.as_str())
        .unwrap_or_else(|| panic!("{disk}: {timed:#?}"));
    assert!(
        t["total"].as_u64().unwrap() > 0 || t["count"].as_u64().unwrap() > 0,
        "{t}"
    );
    let at = text
        .stdout
        .iter()
        .position(|l| l.starts_with("HARDIRQ"))
        .unwrap_or_else(|| panic!("{:?}", text.stdout));
    assert_eq!(text.stdout[at], "HARDIRQ          TOTAL_usecs");
    assert!(
        text.stdout[at + 1..]
            .iter()
            .any(|l| l.starts_with(&format!("{disk} "))),
        "{disk}: {:?}",
        text.stdout
    );
}

#[test]
fn hardirqs_counts_the_disks_interrupts() {
    let _serial = testkit::one_at_a_time();
    disk_seen("");
}

/// raw_tp and the classic tracepoints, where tp_btf exists too.
#[test]
fn hardirqs_raw_tp_variant() {
    require_root();
    let _serial = testkit::one_at_a_time();
    disk_seen("tp_btf");
}

#[test]
fn hardirqs_classic_tracepoint_variant() {
    require_root();
    let _serial = testkit::one_at_a_time();
    disk_seen("tp_btf,raw_tp");
}
