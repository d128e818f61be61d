//! drsnoop against a reclaim of the test's own: a program reading a 64 MiB
//! file, its cached pages dropped first, in a memory cgroup limited to
//! 16 MiB (testbed::MemoryCage): the cgroup's reclaim runs in the reader, and
//! frees at least what the file holds beyond the limit.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use testkit::unique;

const BIN: &str = env!("CARGO_BIN_EXE_drsnoop");
const LIMIT: u64 = 16 << 20;
const FILE: u64 = 64 << 20;
const PAGE: u64 = 4096;

/// The file the workload reads, on the scratch disk (a real block
/// device: its pages are read into the page cache), one per run: a page
/// another run's reader cached is charged to that reader's cgroup, and
/// reading it costs this one nothing. Removed on drop.
struct BigFile(PathBuf);

impl BigFile {
    fn new() -> BigFile {
        let path = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR")).join(unique("drsnoop-64m-"));
        let mut f = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(&mut f, &vec![7u8; FILE as usize]).unwrap();
        // Written back: clean pages, which the reader's fadvise drops.
        f.sync_all().unwrap();
        BigFile(path)
    }
}

impl Drop for BigFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The tool (`args`, hooks in `disable` off) on one run of the reader in
/// a cage; the reader's pid.
fn trace(args: &[&str], disable: &str) -> (testkit::Finished, u32) {
    testkit::require_root();
    let prog = testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "reclaim-work",
    );
    let file = BigFile::new();
    let cage = testbed::MemoryCage::new(&unique("bpftools-drsnoop-"), LIMIT).unwrap();
    testkit::trace_pid(Command::new(&prog).arg(&file.0), BIN, args, disable, |p| {
        cage.enter(p).unwrap();
    })
}

/// The reader's reclaims: its own, its cgroup's, and at least what the
/// file holds beyond the limit freed.
fn check(events: &[Value], pid: u32) {
    assert!(!events.is_empty());
    let mut pages = 0;
    for e in events {
        assert_eq!(e["pid"], pid, "{e}");
        assert_eq!(e["comm"], "reclaim-work", "{e}");
        assert_eq!(e["type"], "memcg", "{e}");
        assert!(e["latency_ns"].as_u64().unwrap() > 0, "{e}");
        assert!(e["order"].as_i64().unwrap() >= 0, "{e}");
        pages += e["pages"].as_u64().unwrap();
    }
    let beyond = (FILE - LIMIT) / PAGE;
    assert!(
        pages >= beyond * 9 / 10,
        "{pages} pages reclaimed, {beyond} beyond the limit"
    );
}

#[test]
fn drsnoop_shows_a_cgroups_reclaim_in_its_reader() {
    let (f, pid) = trace(&["--json"], "");
    check(&f.json(), pid);
}

#[test]
fn drsnoop_prints_bccs_layout() {
    let (f, pid) = trace(&["-U"], "");
    assert_eq!(
        f.stdout[0], "UID    COMM           PID     LAT(ms) PAGES TYPE",
        "{f:?}"
    );
    assert!(f.stdout.len() > 1, "{f:?}");
    for l in &f.stdout[1..] {
        let cells: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(cells[..3], ["0", "reclaim-work", &pid.to_string()], "{l}");
        assert!(cells[3].parse::<f64>().is_ok(), "{l}");
        assert!(cells[4].parse::<u64>().is_ok(), "{l}");
        assert_eq!(cells[5], "memcg", "{l}");
    }
}

/// --direct: direct reclaim only, as BCC's: the cgroup's reclaims are not
/// shown (this machine has free memory: no direct reclaim).
#[test]
fn drsnoop_direct_leaves_the_cgroups_reclaim_out() {
    let (f, _) = trace(&["--json", "--direct"], "");
    assert!(f.json().is_empty(), "{f:?}");
}

/// Each variant of the vmscan tracepoints (raw_tp, the classic one) sees
/// the same reclaims.
#[test]
fn drsnoop_hook_variants() {
    for (disable, hook) in [
        ("tp_btf", "raw_tp mm_vmscan_memcg_reclaim_begin"),
        (
            "tp_btf,raw_tp",
            "tracepoint vmscan:mm_vmscan_memcg_reclaim_begin",
        ),
    ] {
        let (f, pid) = trace(&["--json", "-v"], disable);
        assert!(f.stderr.contains(hook), "{hook}: {}", f.stderr);
        check(&f.json(), pid);
    }
}
