//! `bpftools doctor` against the tools themselves: every tool's verdict and
//! hooks in doctor's report are what the tool's own dry run says, here and
//! in each VM guest (the guests also check doctor's report against their
//! dry runs: xtask vmtest); a hook kind denied (BPFTOOLS_DISABLE) changes
//! doctor's report as it changes the tool's choice.

use std::os::unix::process::CommandExt;
use std::process::{Command, Output};

use serde_json::Value;

const BPFTOOLS: &str = env!("CARGO_BIN_EXE_bpftools");

fn doctor(args: &[&str], disable: Option<&str>) -> Output {
    let mut cmd = Command::new(BPFTOOLS);
    cmd.arg("doctor").args(args);
    if let Some(d) = disable {
        cmd.env("BPFTOOLS_DISABLE", d);
    }
    cmd.output().expect("running bpftools doctor")
}

fn report(args: &[&str], disable: Option<&str>) -> Value {
    let out = doctor(&[&["--json"], args].concat(), disable);
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).expect("doctor --json prints one JSON object")
}

/// The tool's own text dry run, as README's kernel matrix reads it.
fn dry_run(tool: &str, args: &str) -> String {
    let args = args.replace("$$", &std::process::id().to_string());
    let out = Command::new(BPFTOOLS)
        .arg0(tool)
        .arg("--dry-run")
        .args(args.split_whitespace())
        .output()
        .expect("running a dry run");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn every_tools_verdict_and_hooks_are_its_own_dry_runs() {
    testkit::require_root();
    let report = report(&[], None);
    let tools = report["tools"].as_array().unwrap();
    let infos = registry_dry_runs();
    assert_eq!(tools.len(), infos.len(), "a row for each dry run: {report}");
    for (row, (tool, dry)) in tools.iter().zip(&infos) {
        let label = format!("{tool} {}", dry.label).trim().to_string();
        assert_eq!(row["tool"], label.as_str());
        let own = dry_run(tool, dry.args);
        let verdict = row["verdict"].as_str().unwrap();
        assert_eq!(
            row["hooks"].as_str().unwrap(),
            registry::hooks::cell(&own),
            "{label}: doctor's hooks differ from the dry run's:\n{own}"
        );
        let expected = if own.contains(": error: ") {
            "UNAVAILABLE"
        } else if own.contains("  degraded: ") {
            "DEGRADED"
        } else {
            "OK"
        };
        assert_eq!(verdict, expected, "{label}:\n{own}");
        // Each verdict but OK says why.
        assert_eq!(row["why"].is_string(), verdict != "OK", "{label}: {row}");
    }
}

use common::run::lifecycle::Entry;

include!(concat!(env!("OUT_DIR"), "/tools.rs"));

/// Every tool's dry runs, in the bundle's order, as the registry lists them.
fn registry_dry_runs() -> Vec<(&'static str, &'static registry::DryRun)> {
    TOOLS
        .iter()
        .flat_map(|t| t.info.dry_runs.iter().map(move |d| (t.info.name, d)))
        .collect()
}

#[test]
fn a_denied_hook_kind_changes_the_verdict_as_it_changes_the_tool() {
    testkit::require_root();
    let hooks = |disable| {
        let r = report(&["runqlat"], disable);
        r["tools"][0]["hooks"].as_str().unwrap().to_string()
    };
    let own = registry::hooks::cell(&dry_run("runqlat", ""));
    assert_eq!(hooks(None), own);
    // No tp_btf: raw_tp, as runqlat itself then chooses.
    let raw = hooks(Some("tp_btf"));
    assert!(raw.starts_with("raw_tp sched_wakeup"), "{raw}");
    // No fentry, kprobes or tracepoints' BTF form: vfsstat at the system
    // calls, degraded and saying so.
    let r = report(&["vfsstat"], Some("fentry,kprobe"));
    assert_eq!(r["tools"][0]["verdict"], "DEGRADED", "{r}");
    assert!(r["tools"][0]["why"]
        .as_str()
        .unwrap()
        .contains("system call mode"));
    assert!(r["machine"]["BPFTOOLS_DISABLE"]
        .as_str()
        .unwrap()
        .starts_with("fentry,kprobe"));
}

#[test]
fn the_machine_is_described_as_the_tools_see_it() {
    testkit::require_root();
    let r = report(&["runqlat"], None);
    let m = &r["machine"];
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(m["kernel"], release.trim());
    // The tracefs the tools use (mounted by the first that needs it).
    let tracefs = m["tracefs"].as_str().unwrap();
    assert!(std::path::Path::new(tracefs).join("events").is_dir(), "{m}");
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap();
    assert_eq!(m["kernel.perf_event_paranoid"], paranoid.trim());
    // Root holds what the tools use.
    assert!(
        m["capabilities"].as_str().unwrap().contains("CAP_BPF"),
        "{m}"
    );
}

#[test]
fn bad_input_is_named_with_exit_2() {
    for args in [&["nosuchtool"][..], &["--bogus"]] {
        let out = doctor(args, None);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(args[0]) && err.contains("usage"), "{err}");
    }
}
