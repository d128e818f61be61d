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
        let expected = registry::hooks::verdict(&own);
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

/// `--tracepoints 'sched:*'`: what tracefs lists under events/sched, each
/// as `sched:NAME`; `-v` adds each one's fields.
#[test]
fn tracepoints_are_listed_as_tracefs_has_them() {
    testkit::require_root();
    let out = doctor(&["--tracepoints", "sched:*"], None);
    assert!(out.status.success(), "{out:?}");
    let listed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect();
    let report = report(&["runqlat"], None);
    let events =
        std::path::Path::new(report["machine"]["tracefs"].as_str().unwrap()).join("events/sched");
    let mut expected: Vec<String> = std::fs::read_dir(events)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| format!("sched:{}", e.file_name().to_string_lossy()))
        .collect();
    expected.sort();
    assert!(expected.contains(&"sched:sched_switch".to_string()));
    assert_eq!(listed, expected);
    let out = doctor(&["--tracepoints", "sched:sched_switch", "-v"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("sched:sched_switch\n") && text.contains("    pid_t next_pid;"),
        "{text}"
    );
}

/// `--usdt`: the test program's probe, by its file and by its process.
#[test]
fn usdt_probes_are_listed_by_file_and_by_process() {
    testkit::require_root();
    let bin = testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "dr-usdt",
    );
    let path = bin.display().to_string();
    let out = doctor(&["--usdt", &path], None);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{path} drtest:ping\n")
    );
    let program = testkit::ReadyProcess::start(&bin, &[]);
    let pid = program.pid().to_string();
    let out = doctor(&["--usdt", &pid, "--json"], None);
    let rows: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        rows.iter().any(|r| r["file"] == path.as_str()
            && r["provider"] == "drtest"
            && r["name"] == "ping"),
        "{rows:?}"
    );
    let out = doctor(&["--usdt", "/no/such/file"], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// `--loaded`: a running tool's programs, each held by its pid.
/// `--loaded`'s text: a holder's hostile name (a program prefix holding
/// an escape sequence: `ESC[2J-runqlat` runs runqlat) shown escaped.
#[test]
fn loaded_shows_hostile_process_names_escaped() {
    testkit::require_root();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("\x1b[2J-runqlat");
    std::os::unix::fs::symlink(BPFTOOLS, &link).unwrap();
    let mut tool = Command::new(&link)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = tool.id();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let text = loop {
        let out = doctor(&["--loaded"], None);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if text.contains(&format!(" {pid}/")) || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let _ = tool.wait();
    assert!(text.contains(&format!("{pid}/\\x1b[2J-runqlat")), "{text}");
    assert!(!text.contains('\x1b'), "{text}");
}

#[test]
fn loaded_programs_are_listed_with_who_holds_them() {
    testkit::require_root();
    let mut runqlat = Command::new(BPFTOOLS)
        .arg0("runqlat")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = runqlat.id();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let held = loop {
        let out = doctor(&["--loaded", "--json"], None);
        let rows: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let held: Vec<Value> = rows
            .into_iter()
            .filter(|r| {
                r["held_by"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|h| h["pid"] == pid)
            })
            .collect();
        if held.len() >= 3 || std::time::Instant::now() > deadline {
            break held;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let _ = runqlat.wait();
    let names: Vec<&str> = held.iter().map(|r| r["name"].as_str().unwrap()).collect();
    // Its three programs (tp_btf here, raw_tp where task storage is missing).
    assert_eq!(names.len(), 3, "{held:?}");
    assert!(names.iter().all(|n| n.starts_with("rq_")), "{names:?}");
    // Its name: the binary's (a link would be named runqlat).
    assert!(
        held.iter().all(|r| r["held_by"][0]["comm"] == "bpftools"),
        "{held:?}"
    );
}
