//! Least privilege: the tools run by a user who is not root, holding file
//! capabilities on a copy of the binary (as README and every man page's
//! PRIVILEGES say to give them), and a user short of one is told which.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::run::lifecycle::Entry;
use serde_json::Value;

include!(concat!(env!("OUT_DIR"), "/tools.rs"));

const BPFTOOLS: &str = env!("CARGO_BIN_EXE_bpftools");
/// The capabilities README grants: loading and attaching (CAP_BPF,
/// CAP_PERFMON), tracefs, kernel symbols, other users' processes.
const GRANTED: &str = "cap_bpf,cap_perfmon,cap_dac_read_search,cap_syslog,cap_sys_ptrace";
/// nobody: no capability of its own, no file of its own.
const USER: &str = "65534";

/// A copy of the binary holding `caps` as file capabilities, in a directory
/// the user may enter (not /tmp's noexec where a machine has one).
struct Copy {
    _dir: tempfile::TempDir,
    bin: PathBuf,
}

fn copy_with(caps: &str) -> Copy {
    testkit::require_root();
    let dir = tempfile::Builder::new()
        .prefix("bpftools-caps")
        .tempdir_in("/var/tmp")
        .expect("a directory under /var/tmp");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = dir.path().join("bpftools");
    std::fs::copy(BPFTOOLS, &bin).expect("copying bpftools");
    let set = Command::new("setcap")
        .arg(format!("{caps}+ep"))
        .arg(&bin)
        .output()
        .expect("running setcap (package libcap2-bin)");
    assert!(set.status.success(), "setcap {caps}: {set:?}");
    Copy { _dir: dir, bin }
}

/// `bin` (the copy, or a link to it named as a tool) run by the
/// unprivileged user.
fn as_user(bin: &Path) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args([
        &format!("--reuid={USER}"),
        &format!("--regid={USER}"),
        "--clear-groups",
        "--",
    ]);
    cmd.arg(bin).stdin(Stdio::null());
    cmd
}

/// A link named `tool` to the copy, so that the user runs the tool.
fn tool_link(copy: &Copy, tool: &str) -> PathBuf {
    let link = copy.bin.with_file_name(tool);
    if !link.exists() {
        std::os::unix::fs::symlink("bpftools", &link).unwrap();
    }
    link
}

fn doctor_json(cmd: &mut Command) -> Value {
    let out = cmd.args(["doctor", "--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Every tool's every dry run fares as it does for root: the same verdict
/// and the same hooks.
#[test]
fn every_tool_runs_as_a_user_holding_the_capabilities() {
    let copy = copy_with(GRANTED);
    let root = doctor_json(&mut Command::new(BPFTOOLS));
    let user = doctor_json(&mut as_user(&copy.bin));
    let caps = user["machine"]["capabilities"].as_str().unwrap();
    assert!(caps.contains("lacking CAP_SYS_ADMIN"), "not root: {caps}");
    let (root, user) = (
        root["tools"].as_array().unwrap(),
        user["tools"].as_array().unwrap(),
    );
    assert_eq!(root.len(), user.len());
    for (r, u) in root.iter().zip(user) {
        assert_eq!(
            (&r["tool"], &r["verdict"], &r["hooks"]),
            (&u["tool"], &u["verdict"], &u["hooks"]),
            "as root: {r}\nas the user: {u}"
        );
    }
}

/// One tool of each kind traces for real as that user.
#[test]
fn each_kind_traces_for_real_as_that_user() {
    let copy = copy_with(GRANTED);
    let run = |tool: &str, args: &[&str]| -> Output {
        let link = tool_link(&copy, tool);
        let out = as_user(&link)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert!(out.status.success(), "{tool} {args:?}: {out:?}");
        out
    };
    let text = |o: &Output| String::from_utf8_lossy(&o.stdout).into_owned();
    // A histogram: a second of run queue latency.
    let out = run("runqlat", &["1", "1"]);
    assert!(text(&out).contains("usecs"), "{out:?}");
    // An interval table: the calls of a second, getppid among them (the
    // tool's own loop makes system calls every interval).
    let out = run("syscount", &["-d", "1"]);
    assert!(text(&out).contains("SYSCALL"), "{out:?}");
    // Stacks: profile's folded stacks of two seconds of sampling.
    let out = run("profile", &["-f", "-F", "99", "2"]);
    assert!(text(&out).lines().any(|l| l.contains(';')), "{out:?}");
    // Events: an exec of the test's own, seen by execsnoop.
    let link = tool_link(&copy, "execsnoop");
    let snoop = as_user(&link)
        .args(["--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let marker = testkit::unique("caps-exec");
    let _ = Command::new("/bin/true").arg(&marker).status();
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill has no memory preconditions; the pid is our child's.
    unsafe { libc::kill(snoop.id() as i32, libc::SIGINT) };
    let out = snoop.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(text(&out).contains(&marker), "{out:?}");
}

/// Without CAP_PERFMON every tool ends at once with one line naming it,
/// and exit status 77 (every man page's EXIT STATUS).
#[test]
fn a_user_without_cap_perfmon_is_told_so_by_every_tool() {
    let copy = copy_with("cap_bpf,cap_dac_read_search,cap_syslog,cap_sys_ptrace");
    for t in TOOLS {
        let tool = t.info.name;
        // Its first dry run's arguments (fsslower needs a file system).
        let args = t.info.dry_runs[0]
            .args
            .replace("$$", &std::process::id().to_string());
        let link = tool_link(&copy, tool);
        let out = as_user(&link)
            .arg("--dry-run")
            .args(args.split_whitespace())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(77), "{tool}: {stderr}");
        assert!(
            stderr.contains(&format!("{tool} lacks CAP_PERFMON")),
            "{tool}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{tool}: {stderr}");
    }
}

/// Each tool's dry runs fare as they do for root when the user holds
/// exactly the capabilities doctor lists for it (and no more); a tool that
/// lists CAP_DAC_READ_SEARCH and runs without it names it.
#[test]
fn each_tool_needs_no_more_than_doctor_lists() {
    let root = doctor_json(&mut Command::new(BPFTOOLS));
    let rows = root["tools"].as_array().unwrap();
    let dry_runs: Vec<(&str, &registry::DryRun)> = TOOLS
        .iter()
        .flat_map(|t| t.info.dry_runs.iter().map(move |d| (t.info.name, d)))
        .collect();
    assert_eq!(rows.len(), dry_runs.len());
    let mut copies: std::collections::HashMap<String, Copy> = Default::default();
    let mut tracefs_readers = 0;
    for (row, (tool, dry)) in rows.iter().zip(&dry_runs) {
        if row["verdict"] == "UNAVAILABLE" {
            continue;
        }
        let caps: Vec<&str> = row["capabilities"]
            .as_array()
            .unwrap_or_else(|| panic!("{tool}: no capabilities in {row}"))
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert!(caps.starts_with(&["CAP_BPF", "CAP_PERFMON"]), "{row}");
        let mut dry_run = |caps: &[&str]| -> Output {
            let set = caps.join(",").to_lowercase();
            let copy = copies.entry(set.clone()).or_insert_with(|| copy_with(&set));
            let args = dry.args.replace("$$", &std::process::id().to_string());
            as_user(&tool_link(copy, tool))
                .args(["--dry-run", "--json"])
                .args(args.split_whitespace())
                .output()
                .unwrap()
        };
        let out = dry_run(&caps);
        assert!(
            out.status.success(),
            "{tool} {} with {caps:?}: {out:?}",
            dry.args
        );
        // Its notes on stderr and the text dry run's lines, as doctor
        // reads them.
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let text: String = String::from_utf8_lossy(&out.stderr).into_owned()
            + &report["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| format!("  {}\n", l.as_str().unwrap()))
                .collect::<String>();
        assert_eq!(
            registry::hooks::cell(&text),
            row["hooks"].as_str().unwrap(),
            "{tool} {}: {report}\nas root: {row}",
            dry.args
        );
        if caps.contains(&"CAP_DAC_READ_SEARCH") {
            tracefs_readers += 1;
            let short: Vec<&str> = caps
                .iter()
                .copied()
                .filter(|c| *c != "CAP_DAC_READ_SEARCH")
                .collect();
            let out = dry_run(&short);
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                said.contains("lacks CAP_DAC_READ_SEARCH"),
                "{tool} {} without CAP_DAC_READ_SEARCH: {said}",
                dry.args
            );
        }
    }
    assert!(tracefs_readers > 0, "no tool reads tracefs: {root}");
}

/// Without CAP_SYSLOG a stack tool still runs, and says at once that its
/// kernel frames cannot be named, and why.
#[test]
fn a_stack_tool_without_cap_syslog_says_its_kernel_frames_are_unknown() {
    let copy = copy_with("cap_bpf,cap_perfmon,cap_dac_read_search,cap_sys_ptrace");
    let out = as_user(&tool_link(&copy, "profile"))
        .args(["-K", "-f", "-F", "99", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("kernel frames are [unknown]: profile lacks CAP_SYSLOG"),
        "{stderr}"
    );
    assert!(!stderr.contains("CAP_SYS_PTRACE"), "{stderr}");
    // As root, nothing is short.
    let out = Command::new(BPFTOOLS)
        .arg0("profile")
        .args(["-K", "-f", "-F", "99", "--dry-run"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("lacks"),
        "{out:?}"
    );
}
