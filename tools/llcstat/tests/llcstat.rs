//! llcstat on this machine and the VM guests, which have no PMU: the
//! refusal (one line, exit 1, nothing left loaded), and where there is
//! one, the counts of a workload of the test's own. The counting itself
//! with software events standing in (BPFTOOLS_LLCSTAT_SOFTWARE: cpu-clock
//! for references, page-faults for misses): a workload on CPU 0 writing
//! 2048 new pages shows at least those faults, on CPU 0, in its process.

use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_llcstat");
const TMP: &str = env!("CARGO_TARGET_TMPDIR");
const PAGES: u64 = 2048;

/// The tool (`args`, then `-p PID`; the software stand-in where
/// `software`) while the workload runs.
fn trace(args: &[&str], software: bool) -> (testkit::Finished, u32) {
    testkit::require_root();
    let prog = testkit::build_c_program(env!("CARGO_MANIFEST_DIR"), TMP, "llc-work");
    let mut pid = 0;
    let f = testkit::trace_stopped(Command::new(&prog).arg(PAGES.to_string()), |p| {
        pid = p;
        let mut tool = Command::new(BIN);
        tool.args(args).args(["-p", &p.to_string()]);
        if software {
            tool.env("BPFTOOLS_LLCSTAT_SOFTWARE", "1");
        }
        tool
    });
    (f, pid)
}

fn check(rows: &[Value], pid: u32) {
    assert!(!rows.is_empty());
    for r in rows {
        assert_eq!(r["pid"], pid, "{r}");
        assert_eq!(r["comm"], "llc-work", "{r}");
        assert_eq!(r["cpu"], 0, "{r}");
    }
    let misses: u64 = rows.iter().map(|r| r["misses"].as_u64().unwrap()).sum();
    let refs: u64 = rows.iter().map(|r| r["references"].as_u64().unwrap()).sum();
    // Its pages' faults and a few of its own start (libc's, the stack's).
    assert!((PAGES..PAGES + 200).contains(&misses), "{rows:?}");
    assert!(refs > 0, "{rows:?}");
}

#[test]
fn llcstat_refuses_without_a_pmu() {
    testkit::require_root();
    if llcstat::hooks_present() {
        let (f, pid) = trace(&["--json", "-c", "1000", "-d", "60"], false);
        let rows = f.json();
        assert!(rows.iter().any(|r| r["pid"] == pid), "{f:?}");
        return;
    }
    let out = Command::new(BIN).arg("1").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let refusal: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(refusal.len(), 1, "{err}");
    assert!(
        refusal[0].contains("llcstat needs the hardware cache-references counter")
            && refusal[0].contains("no PMU"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn llcstat_counts_by_process_and_cpu() {
    let (f, pid) = trace(&["--json", "-c", "1", "-d", "60"], true);
    assert!(
        f.stderr.contains("counting cpu-clock and page-faults"),
        "{}",
        f.stderr
    );
    check(&f.json(), pid);
}

/// -t's TID column (the workload's one thread), BCC's text and totals.
#[test]
fn llcstat_prints_bccs_layout_by_thread() {
    let (f, pid) = trace(&["-t", "-c", "1", "60"], true);
    let header = f
        .stdout
        .iter()
        .position(|l| l.starts_with("PID"))
        .unwrap_or_else(|| panic!("{f:?}"));
    assert_eq!(
        f.stdout[header],
        "PID      TID      NAME             CPU     REFERENCE         MISS    HIT%"
    );
    let rows: Vec<&String> = f.stdout[header + 1..]
        .iter()
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(!rows.is_empty(), "{f:?}");
    let mut misses = 0;
    for r in &rows {
        let cells: Vec<&str> = r.split_whitespace().collect();
        assert_eq!(
            cells[..4],
            [&pid.to_string(), &pid.to_string(), "llc-work", "0"],
            "{r}"
        );
        assert!(cells[6].ends_with('%'), "{r}");
        misses += cells[5].parse::<u64>().unwrap();
    }
    assert!(misses >= PAGES, "{f:?}");
    let total = f.stdout.last().unwrap();
    assert!(
        total.starts_with("Total References: ") && total.contains(" Total Misses: "),
        "{f:?}"
    );
}
