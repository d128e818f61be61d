//! capable against capability checks of the test's own: an unprivileged
//! process's chown()s of a file it owns to root (CAP_CHOWN, denied, once
//! per call) and root's chown of a file to nobody (CAP_CHOWN, allowed), in
//! each hook variant; the stacks of a check, -p, --unique, -v and the
//! container filter.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_capable");
const NOBODY: u32 = 65534;
const CAP_CHOWN: u32 = 0;
/// The denied chowns the unprivileged process makes.
const DENIED: usize = 3;

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(300))
}

/// A file of the test's own in /tmp (which nobody can reach), owned by
/// `uid`; removed on drop.
struct File(PathBuf);

impl File {
    fn owned_by(uid: u32) -> File {
        let path = std::env::temp_dir().join(unique("bpftools-cap-"));
        std::fs::write(&path, b"").unwrap();
        std::os::unix::fs::chown(&path, Some(uid), None).unwrap();
        File(path)
    }
}

impl Drop for File {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// python3 chowning `path` to `to` `times` times, as `uid` (setpriv), each
/// refusal caught; when `held`, between a line on its stdin and its end
/// (so that its stacks can be named while it lives), and followed by a
/// non-audit check: reading another user's /proc/1/stat asks whether it
/// may trace it (CAP_SYS_PTRACE, denied, not audited).
fn chowner(uid: u32, path: &Path, to: u32, times: usize, held: bool) -> Command {
    let script = format!(
        "import os, sys\n\
         if {held}: print('ready', flush=True); sys.stdin.readline()\n\
         for _ in range({times}):\n\
         \x20   try: os.chown(sys.argv[1], {to}, -1)\n\
         \x20   except PermissionError: pass\n\
         if {held}:\n\
         \x20   open('/proc/1/stat').read()\n\
         \x20   sys.stdin.read()\n",
        held = if held { "True" } else { "False" },
    );
    let mut cmd = Command::new("setpriv");
    cmd.args([
        &format!("--reuid={uid}"),
        &format!("--regid={uid}"),
        "--clear-groups",
        // The system's (root's PATH may lead to one nobody cannot run).
        "/usr/bin/python3",
        "-c",
        &script,
    ])
    .arg(path);
    cmd
}

fn run(cmd: &mut Command) -> u32 {
    let mut child = cmd.spawn().unwrap();
    let pid = child.id();
    assert!(child.wait().unwrap().success());
    pid
}

/// Starts a held chowner and waits until it waits for a line on its stdin:
/// python's own start makes checks too (CAP_DAC_READ_SEARCH, …), and on a
/// busy machine they would fall between two tools' starts.
fn held(uid: u32, path: &Path, to: u32) -> Child {
    testkit::spawn_ready(chowner(uid, path, to, DENIED, true).stdin(Stdio::piped()))
}

/// Lets a held chowner make its checks.
fn release(child: &mut Child) {
    let stdin = child.stdin.as_mut().unwrap();
    stdin.write_all(b"go\n").unwrap();
    stdin.flush().unwrap();
}

/// Ends a held chowner.
fn end(mut child: Child) {
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
}

fn chowns(events: &[Value], pid: u32) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["pid"] == pid && e["cap"] == CAP_CHOWN)
        .collect()
}

/// The hook the dry run names, and whether it sees the checks' options.
fn hook(disable: &str) -> (String, bool) {
    let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
    assert!(dry.status.success(), "{dry:?}");
    let dry = dry.stdout.join("\n");
    let opts = dry.contains("fexit cap_capable") || dry.contains("kprobe cap_capable");
    (dry, opts)
}

fn checks_seen(disable: &str, expected_hook: &str) {
    let (dry, opts) = hook(disable);
    assert!(dry.contains(expected_hook), "{expected_hook}: {dry}");
    let mine = File::owned_by(NOBODY);
    let roots = File::owned_by(0);
    let json = start(&["--json", "-x"], disable);
    let once = start(&["--json", "--unique"], disable);
    let text = start(&[], disable);
    let denied = run(&mut chowner(NOBODY, &mine.0, 0, DENIED, false));
    let allowed = run(&mut chowner(0, &roots.0, NOBODY, 1, false));
    let (json, once, text) = (stop(json), stop(once), stop(text));
    let events = json.json();
    let seen = chowns(&events, denied);
    assert_eq!(seen.len(), DENIED, "{events:#?}");
    for e in &seen {
        assert_eq!(e["uid"], NOBODY, "{e}");
        assert_eq!(e["tid"], denied, "{e}");
        assert_eq!(e["comm"], "python3", "{e}");
        assert_eq!(e["name"], "CAP_CHOWN", "{e}");
        assert_eq!(e["verdict"], "deny", "{e}");
        assert_eq!(e["ret"], -libc::EPERM, "{e}");
        if opts {
            // chown_ok's check is an audited one, and no set-id check.
            assert_eq!(e["audit"], 1, "{e}");
            assert_eq!(e["insetid"], 0, "{e}");
        } else {
            assert!(
                e.get("audit").is_none() && e.get("insetid").is_none(),
                "{e}"
            );
        }
    }
    let granted = chowns(&events, allowed);
    assert_eq!(granted.len(), 1, "{events:#?}");
    assert_eq!(granted[0]["uid"], 0, "{}", granted[0]);
    assert_eq!(granted[0]["verdict"], "allow", "{}", granted[0]);
    assert_eq!(granted[0]["ret"], 0, "{}", granted[0]);
    // --unique: the capability once for the process.
    let once = once.json();
    assert_eq!(chowns(&once, denied).len(), 1, "{once:#?}");
    // BCC's text with the verdict: TIME UID PID COMM CAP NAME AUDIT VERDICT.
    assert_eq!(
        text.stdout[0],
        "TIME      UID    PID    COMM             CAP  NAME                 AUDIT  VERDICT"
    );
    let lines: Vec<Vec<&str>> = text
        .stdout
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|c| {
            c.get(2) == Some(&denied.to_string().as_str()) && c.get(5) == Some(&"CAP_CHOWN")
        })
        .collect();
    assert_eq!(lines.len(), DENIED, "{:?}", text.stdout);
    let audit = if opts { "1" } else { "-" };
    assert_eq!(
        lines[0][1..],
        [
            "65534",
            &denied.to_string(),
            "python3",
            "0",
            "CAP_CHOWN",
            audit,
            "deny"
        ]
    );
}

#[test]
fn capable_sees_chown_checks_with_their_verdicts() {
    // The kernel's best: fexit where it has fentry, else a kprobe, else the
    // tracepoint.
    checks_seen("", "cap_capable");
}

/// kprobe and kretprobe, where the kernel has fentry too (the VMs).
#[test]
fn capable_kprobe_variant() {
    require_root();
    let (dry, _) = hook("fentry");
    if !testkit::feature_present(dry.contains("kprobe"), "kprobes", None) {
        return;
    }
    checks_seen("fentry", "kprobe cap_capable");
}

fn tracepoint_variant(disable: &str, hook_name: &str) {
    require_root();
    let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
    let present = dry.status.success() && dry.stdout.join("\n").contains(hook_name);
    if !testkit::feature_present(
        present,
        "the capability:cap_capable tracepoint",
        Some((6, 14)),
    ) {
        return;
    }
    checks_seen(disable, hook_name);
}

/// The tracepoint: BTF-typed, raw, and classic.
#[test]
fn capable_tracepoint_variant() {
    tracepoint_variant("fentry,kprobe", "tp_btf cap_capable");
}

#[test]
fn capable_raw_tracepoint_variant() {
    tracepoint_variant("fentry,kprobe,tp_btf", "raw_tp cap_capable");
}

#[test]
fn capable_classic_tracepoint_variant() {
    tracepoint_variant(
        "fentry,kprobe,tp_btf,raw_tp",
        "tracepoint capability:cap_capable",
    );
}

/// -K and -U: the stacks that asked; -p: that process only.
#[test]
fn capable_shows_the_stacks_of_a_check() {
    let mine = File::owned_by(NOBODY);
    let mut child = held(NOBODY, &mine.0, 0);
    let pid = child.id();
    let p = pid.to_string();
    let json = start(&["--json", "-K", "-U", "-p", &p], "");
    let text = start(&["-K", "-p", &p], "");
    release(&mut child);
    let (json, text) = (stop(json), stop(text));
    end(child);
    let events = json.json();
    assert!(events.iter().all(|e| e["pid"] == pid), "{events:#?}");
    let seen = chowns(&events, pid);
    assert_eq!(seen.len(), DENIED, "{events:#?}");
    let mut whole = true;
    for e in seen {
        // The user stack's leaf: libc's chown (or fchownat, which it calls).
        let user = e["user_stack"].as_array().unwrap_or_else(|| panic!("{e}"));
        let leaf = user.first().and_then(|f| f.as_str()).unwrap_or_default();
        assert!(leaf.contains("chown"), "{user:?}");
        let kernel: Vec<&str> = e["kernel_stack"]
            .as_array()
            .unwrap_or_else(|| panic!("{e}"))
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        // The system call's path to the check, not the tracing machinery
        // (5.10's unwinder stops after cap_capable: said, not failed).
        if kernel.len() <= 2 {
            whole = false;
            continue;
        }
        assert!(
            kernel.iter().any(|f| f.starts_with("chown_common+")),
            "{kernel:?}"
        );
        assert!(!kernel[0].starts_with("bpf_"), "{kernel:?}");
    }
    if !testkit::feature_present(whole, "kernel stacks past cap_capable", Some((5, 15))) {
        return;
    }
    // Text: each kernel frame under its line, as BCC prints them.
    let at = text
        .stdout
        .iter()
        .position(|l| l.contains("CAP_CHOWN"))
        .unwrap_or_else(|| panic!("{:?}", text.stdout));
    let frames: Vec<&String> = text.stdout[at + 1..]
        .iter()
        .take_while(|l| l.starts_with("        "))
        .collect();
    assert!(
        frames
            .iter()
            .any(|f| f.trim_start().starts_with("chown_common+") && f.ends_with(" [kernel]")),
        "{:?}",
        text.stdout
    );
}

/// BCC's -v: the checks the kernel does not audit too (/proc/1/stat's
/// CAP_SYS_PTRACE), where the hook sees a check's options; the tracepoint
/// shows every check either way.
#[test]
fn capable_v_adds_the_non_audit_checks() {
    let (_, opts) = hook("");
    let mine = File::owned_by(NOBODY);
    let mut child = held(NOBODY, &mine.0, 0);
    let pid = child.id();
    let p = pid.to_string();
    let audited = start(&["--json", "-p", &p], "");
    let all = start(&["--json", "-v", "-p", &p], "");
    release(&mut child);
    let (audited, all) = (stop(audited), stop(all));
    end(child);
    let (audited, all) = (audited.json(), all.json());
    assert_eq!(chowns(&audited, pid).len(), DENIED, "{audited:#?}");
    assert_eq!(chowns(&all, pid).len(), DENIED, "{all:#?}");
    if !opts {
        assert!(all.iter().all(|e| e.get("audit").is_none()), "{all:#?}");
        assert_eq!(audited.len(), all.len(), "{audited:#?}\n{all:#?}");
        return;
    }
    assert!(audited.iter().all(|e| e["audit"] == 1), "{audited:#?}");
    assert!(
        all.iter()
            .any(|e| e["audit"] == 0 && e["name"] == "CAP_SYS_PTRACE" && e["verdict"] == "deny"),
        "{all:#?}"
    );
}

/// --container: the checks of a container's processes only, named.
#[test]
fn capable_container_filter() {
    let docker = testkit::FakeContainer::docker();
    let mine = File::owned_by(NOBODY);
    let tool = start(
        &["--json", "--containers", "--container", docker.short_id()],
        "",
    );
    let outside = run(&mut chowner(NOBODY, &mine.0, 0, DENIED, false));
    let mut cmd = chowner(NOBODY, &mine.0, 0, DENIED, false);
    let inside = run(docker.adopt(&mut cmd));
    let events = stop(tool).json();
    assert_eq!(chowns(&events, inside).len(), DENIED, "{events:#?}");
    assert!(chowns(&events, outside).is_empty(), "{events:#?}");
    assert!(
        events.iter().all(|e| e["container"] == docker.short_id()),
        "{events:#?}"
    );
}
