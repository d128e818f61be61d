//! readahead against a program of the test's own (ra-work.c): a file read
//! whole, one page per read, and a file of which only the first page is
//! read, both evicted from the page cache first. This machine's kernel
//! offers neither fentry nor kprobes: the tests that attach run in the VM
//! guests and skip here, saying so; the refusal is tested everywhere.

use std::process::Command;

use serde_json::Value;
use testkit::{feature_present, require_root};

const BIN: &str = env!("CARGO_BIN_EXE_readahead");
/// FILE_A's pages (1 MiB): under 1024, mincore's vector in ra-work.
const A_PAGES: u64 = 256;

const NEEDS: &str = "fentry or kprobes on the read-ahead functions";

/// What `--dry-run` prints under `env`; None where readahead cannot attach
/// here: the test is skipped, said.
fn dry_run(env: &[(&str, &str)]) -> Option<String> {
    testkit::dry_run_where_it_runs(BIN, &[], env, NEEDS)
}

/// The report readahead `args` -p made of one run of ra-work, which waits
/// `pause_ms` between its two files.
fn trace(args: &[&str], env: &[(&str, &str)], pause_ms: u32) -> testkit::Finished {
    let prog = testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "ra-work",
    );
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR")).join(testkit::unique("ra"));
    std::fs::create_dir_all(&dir).unwrap();
    let f = testkit::trace_stopped(
        Command::new(&prog)
            .arg(dir.join("a"))
            .arg(A_PAGES.to_string())
            .arg(dir.join("b"))
            .arg(pause_ms.to_string()),
        |pid| {
            let mut tool = Command::new(BIN);
            tool.args(args)
                .args(["-p", &pid.to_string()])
                .envs(env.iter().copied());
            tool
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
    f
}

/// Every page of A was read ahead and used; of B only the first was used,
/// the rest of its window not: used pages (the histogram's count) are
/// exactly A's and B's first, and none is left out.
fn assert_report(report: &Value, hooks: &str) {
    let n = |k: &str| {
        report[k]
            .as_u64()
            .unwrap_or_else(|| panic!("{k}: {report}"))
    };
    let (total, unused, used) = (n("total_pages"), n("unused_pages"), n("count"));
    assert_eq!(n("dropped_pages"), 0, "{hooks}: {report}");
    assert_eq!(used, A_PAGES + 1, "{hooks}: {report}");
    assert!(unused >= 1, "B's window: {hooks}: {report}");
    assert_eq!(total, used + unused, "{hooks}: {report}");
    let buckets = report["buckets"].as_array().unwrap();
    let counted: u64 = buckets.iter().map(|b| b["count"].as_u64().unwrap()).sum();
    assert_eq!(counted, used, "{report}");
}

fn counts_known_read_ahead(env: &[(&str, &str)], hook: &str) {
    let Some(hooks) = dry_run(env) else {
        return;
    };
    assert!(hooks.contains(hook), "{hooks}");
    let f = trace(&["--json"], env, 0);
    let reports = f.json();
    assert_eq!(reports.len(), 1, "one report at the end: {f:?}");
    assert_eq!(reports[0]["unit"], "usecs", "{f:?}");
    assert_report(&reports[0], &hooks);
}

#[test]
fn readahead_counts_known_pages_with_fentry() {
    counts_known_read_ahead(&[], "fentry page_cache_ra_unbounded");
}

#[test]
fn readahead_counts_known_pages_with_kprobes() {
    counts_known_read_ahead(
        &[("BPFTOOLS_DISABLE", "fentry")],
        "kprobe page_cache_ra_unbounded",
    );
}

/// libbpf-tools' report: its line of pages, then the histogram, in
/// milliseconds with -m.
#[test]
fn readahead_text_report_is_libbpf_tools() {
    require_root();
    if !feature_present(readahead::hooks_present(), NEEDS, None) {
        return;
    }
    let f = trace(&["-m"], &[], 0);
    let out = f.stdout.join("\n");
    assert!(f.stdout[0].starts_with("Tracing fs read-ahead"), "{out}");
    let line = f
        .stdout
        .iter()
        .find(|l| l.starts_with("Readahead unused/total pages: "))
        .unwrap_or_else(|| panic!("{out}"));
    let (unused, total) = line
        .trim_start_matches("Readahead unused/total pages: ")
        .split_once('/')
        .unwrap();
    let (unused, total): (u64, u64) = (unused.parse().unwrap(), total.parse().unwrap());
    assert_eq!(total - unused, A_PAGES + 1, "{out}");
    assert!(out.contains("msecs"), "{out}");
}

/// Without fentry and kprobes (this machine, or forced): one line naming
/// what is missing, exit 1 (before anything loads: the hooks are chosen
/// before the object is).
#[test]
fn readahead_without_fentry_or_kprobes_says_what_is_missing() {
    testkit::assert_refused_in_one_line(
        BIN,
        &["-d", "1"],
        &[("BPFTOOLS_DISABLE", "fentry,kprobe")],
        &["fentry", "kprobes", "page_cache_ra_unbounded", "read-ahead"],
    );
}

/// A workload spanning several intervals (B read 1.5 s after A, reports
/// every second): each report's total is its own interval's, and its
/// histogram holds that interval's uses only, so that over the reports the
/// pages used are exactly A's and B's first, and those read ahead are
/// those plus the pages the last report says are still unused.
#[test]
fn readahead_interval_reports_add_up() {
    let Some(hooks) = dry_run(&[]) else {
        return;
    };
    let f = trace(&["--json", "1"], &[], 1500);
    let reports = f.json();
    assert!(reports.len() >= 2, "{hooks}: {f:?}");
    let sum = |k: &str| -> u64 { reports.iter().map(|r| r[k].as_u64().unwrap()).sum() };
    let used = sum("count");
    let unused = reports.last().unwrap()["unused_pages"].as_u64().unwrap();
    assert_eq!(used, A_PAGES + 1, "{hooks}: {f:?}");
    assert!(unused >= 1, "B's window: {f:?}");
    assert_eq!(sum("total_pages"), used + unused, "{f:?}");
    assert_eq!(sum("dropped_pages"), 0, "{f:?}");
    // A's pages and B's were read ahead in different intervals.
    let read_ahead: Vec<u64> = reports
        .iter()
        .map(|r| r["total_pages"].as_u64().unwrap())
        .filter(|&t| t > 0)
        .collect();
    assert!(read_ahead.len() >= 2, "{f:?}");
}
