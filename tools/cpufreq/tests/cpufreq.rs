//! cpufreq on this machine and the VM guests, which have no cpufreq
//! driver: the refusal (one line, exit 1). Where there is one, a workload's
//! samples. The sampling itself with a stand-in frequency
//! (BPFTOOLS_CPUFREQ_STANDIN_MHZ: every CPU at 2400 MHz): a workload
//! spinning a second on CPU 0 at 99 Hz is about 99 samples, all at 2400.

use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_cpufreq");
const TMP: &str = env!("CARGO_TARGET_TMPDIR");
const STANDIN: &str = "BPFTOOLS_CPUFREQ_STANDIN_MHZ";

/// The tool (`args`, then `-p PID`; every CPU at `standin` MHz where given)
/// while the workload spins.
fn trace(args: &[&str], standin: Option<&str>) -> (testkit::Finished, u32) {
    testkit::require_root();
    let prog = testkit::build_c_program(env!("CARGO_MANIFEST_DIR"), TMP, "cpu-spin");
    let mut pid = 0;
    let f = testkit::trace_stopped(&mut Command::new(&prog), |p| {
        pid = p;
        let mut tool = Command::new(BIN);
        tool.args(args).args(["-p", &p.to_string()]);
        if let Some(mhz) = standin {
            tool.env(STANDIN, mhz);
        }
        tool
    });
    (f, pid)
}

fn section<'a>(sections: &'a [Value], scope: &str) -> &'a Value {
    sections
        .iter()
        .find(|s| s["scope"] == scope)
        .unwrap_or_else(|| panic!("no {scope} histogram: {sections:?}"))
}

#[test]
fn cpufreq_refuses_without_a_driver() {
    testkit::require_root();
    if cpufreq::hooks_present() {
        let (f, _) = trace(&["--json", "-f", "99"], None);
        let s = f.json();
        assert!(
            section(&s, "process")["count"].as_u64().unwrap() > 0,
            "{f:?}"
        );
        return;
    }
    let out = Command::new(BIN).args(["-d", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let refusal: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert_eq!(refusal.len(), 1, "{err}");
    assert!(
        refusal[0].contains("cpufreq needs a cpufreq driver"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn cpufreq_samples_a_process_at_its_cpus_frequency() {
    let (f, pid) = trace(&["--json", "-f", "99"], Some("2400"));
    assert!(
        f.stderr.contains("every CPU taken to run at 2400 MHz"),
        "{}",
        f.stderr
    );
    let sections = f.json();
    let p = section(&sections, "process");
    assert_eq!(p["comm"], "cpu-spin", "{p}");
    let count = p["count"].as_u64().unwrap();
    // A second on a CPU at 99 Hz.
    assert!((50..=120).contains(&count), "{count} samples: {p}");
    let buckets = p["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 1, "{p}");
    assert_eq!(buckets[0]["low"], 2400, "{p}");
    assert_eq!(buckets[0]["count"], count, "{p}");
    // -p: the machine's samples are the process's.
    assert_eq!(
        section(&sections, "machine")["count"],
        count,
        "pid {pid}: {sections:?}"
    );
}

/// -P's titles and libbpf-tools' rows (200 MHz slots from the first with
/// samples), reported when -d ends it.
#[test]
fn cpufreq_prints_linear_histograms_by_pid() {
    let (f, pid) = trace(&["-P", "-f", "99", "-d", "60"], Some("1000"));
    let text = f.stdout.join("\n");
    assert!(text.contains("syswide"), "{text}");
    assert!(text.contains(&format!("pid = {pid} cpu-spin")), "{text}");
    assert!(
        text.contains("     MHZ           : count     distribution"),
        "{text}"
    );
    let rows: Vec<&String> = f
        .stdout
        .iter()
        .filter(|l| l.contains(" : ") && !l.contains("count"))
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for r in rows {
        assert!(r.trim_start().starts_with("1000 "), "{r}");
    }
    let g = testkit::run_with_env(BIN, &["-d", "1"], &[(STANDIN, "1000")]);
    assert!(g.status.success(), "{g:?}");
    assert!(g.stdout.iter().any(|l| l.contains("syswide")), "{g:?}");
}

/// A process named with a control character: escaped in the text's title
/// (no forged line), as it is in JSON.
#[test]
fn cpufreq_escapes_a_hostile_process_name() {
    testkit::require_root();
    let prog = testkit::build_c_program(env!("CARGO_MANIFEST_DIR"), TMP, "cpu-spin");
    let hostile = testkit::scratch_dir(TMP)
        .join(testkit::unique("cf-"))
        .join("spin\nx");
    std::fs::create_dir_all(hostile.parent().unwrap()).unwrap();
    std::fs::copy(&prog, &hostile).unwrap();
    for json in [false, true] {
        let f = testkit::trace_stopped(&mut Command::new(&hostile), |p| {
            let mut tool = Command::new(BIN);
            tool.args(["-f", "99", "-p", &p.to_string()])
                .env(STANDIN, "1000");
            if json {
                tool.arg("--json");
            }
            tool
        });
        if json {
            assert_eq!(section(&f.json(), "process")["comm"], "spin\nx", "{f:?}");
        } else {
            assert!(f.stdout.iter().any(|l| l == "comm = spin\\nx"), "{f:?}");
            assert!(!f.stdout.iter().any(|l| l == "x"), "{f:?}");
        }
    }
    let _ = std::fs::remove_dir_all(hostile.parent().unwrap());
}
