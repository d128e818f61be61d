//! readahead against a program of the test's own (ra-work.c): a file read
//! whole, one page per read, and a file of which only the first page is
//! read, both evicted from the page cache first. This machine's kernel
//! offers neither fentry nor kprobes: the tests that attach run in the VM
//! guests and skip here, saying so; the refusal is tested everywhere.

use std::process::Command;

use serde_json::Value;
use testkit::{feature_present, require_root, run_with_env};

const BIN: &str = env!("CARGO_BIN_EXE_readahead");
/// FILE_A's pages (1 MiB): under 1024, mincore's vector in ra-work.
const A_PAGES: u64 = 256;

/// What `--dry-run` prints under `env`; None where readahead cannot attach
/// here: the test is skipped, said.
fn dry_run(env: &[(&str, &str)]) -> Option<String> {
    require_root();
    let f = run_with_env(BIN, &["--dry-run"], env);
    feature_present(
        f.status.success(),
        "fentry or kprobes on the read-ahead functions",
        None,
    )
    .then(|| f.stdout.join("\n"))
}

/// The report readahead `args` -p made of one run of ra-work.
fn trace(args: &[&str], env: &[(&str, &str)]) -> testkit::Finished {
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
            .arg(dir.join("b")),
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
    let f = trace(&["--json"], env);
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
    if !feature_present(
        readahead::hooks_present(),
        "fentry or kprobes on the read-ahead functions",
        None,
    ) {
        return;
    }
    let f = trace(&["-m"], &[]);
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
    require_root();
    let f = run_with_env(BIN, &["-d", "1"], &[("BPFTOOLS_DISABLE", "fentry,kprobe")]);
    assert_eq!(f.status.code(), Some(1), "{f:?}");
    let lines: Vec<&str> = f.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{f:?}");
    for word in ["fentry", "kprobes", "page_cache_ra_unbounded", "read-ahead"] {
        assert!(lines[0].contains(word), "{word}: {}", lines[0]);
    }
    assert!(f.stdout.is_empty(), "{f:?}");
}
