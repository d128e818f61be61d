//! oomkill against an OOM kill of the test's own: a memory hog in a memory
//! cgroup with a low limit (cgroup v2's memory.max, or where the memory
//! controller is on cgroup v1, as on a hybrid host, memory.limit_in_bytes),
//! so that no other process is at risk.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_oomkill");
const LIMIT: u64 = 64 << 20;

/// A memory cgroup of the test's own limited to LIMIT, without swap
/// (testbed::MemoryCage).
struct Cage(testbed::MemoryCage);

impl Cage {
    fn new() -> Cage {
        Cage(testbed::MemoryCage::new(&unique("bpftools-oom-"), LIMIT).unwrap())
    }

    /// Runs a hog that touches 512 MiB inside; returns its pid, after the
    /// OOM killer killed it.
    fn hog(&self) -> u32 {
        use std::os::unix::process::ExitStatusExt;
        let mut cmd = Command::new("python3");
        // A hostile name (DEL, a C1 control): escaped in text, the very
        // characters in JSON.
        cmd.args([
            "-c",
            "import ctypes\nctypes.CDLL(None).prctl(15, b'd\\x7fc\\xc2\\x9b', 0, 0, 0)\n\
             b = bytearray(512 << 20)\nprint(len(b))",
        ]);
        self.0.run_inside(&mut cmd);
        let mut child = cmd.spawn().unwrap();
        let pid = child.id();
        let status = child.wait().unwrap();
        assert_eq!(
            status.signal(),
            Some(libc::SIGKILL),
            "not OOM-killed: {status}"
        );
        pid
    }
}

/// The hog's name, and as text shows it.
const HOSTILE: &str = "d\u{7f}c\u{9b}";
const HOSTILE_TEXT: &str = "d\\x7fc\\xc2\\x9b";

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(300))
}

fn kill_seen(disable: &str, hook: &str) {
    let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
    assert!(dry.status.success(), "{dry:?}");
    let dry = dry.stdout.join("\n");
    if hook.is_empty() {
        // The kernel's best: fentry or kprobe where it has them.
        assert!(
            dry.contains("oom_kill_process") || dry.contains("mark_victim"),
            "{dry}"
        );
    } else {
        assert!(dry.contains(hook), "{hook}: {dry}");
    }
    let cage = Cage::new();
    let json = start(&["--json"], disable);
    let text = start(&[], disable);
    let pid = cage.hog();
    let (json, text) = (stop(json), stop(text));
    let kills: Vec<Value> = json
        .json()
        .into_iter()
        .filter(|k| k["victim_pid"] == pid)
        .collect();
    assert_eq!(kills.len(), 1, "{json:?}");
    let k = &kills[0];
    assert_eq!(k["victim_comm"], HOSTILE, "{k}");
    // The hog's own allocation ran the OOM killer: it triggered its kill.
    assert_eq!(k["pid"], pid, "{k}");
    assert_eq!(k["comm"], HOSTILE, "{k}");
    let page = 4096; // the hosts and guests tested
    if dry.contains("oom_kill_process") {
        // The memory the kill was for: the cgroup's limit, in pages.
        assert_eq!(k["total_pages"], LIMIT / page, "{k}");
    } else if let Some(rss) = k["victim_rss_kb"].as_u64() {
        // Near the limit when killed; its file pages (the interpreter's)
        // count in its resident size, not all of them in the cgroup.
        let limit_kb = LIMIT >> 10;
        assert!(rss >= limit_kb / 2 && rss <= limit_kb + (32 << 10), "{k}");
    }
    let line = text
        .stdout
        .iter()
        .find(|l| l.contains(&format!("OOM kill of PID {pid} (\"{HOSTILE_TEXT}\")")))
        .unwrap_or_else(|| panic!("{:?}", text.stdout));
    assert!(
        line.contains(&format!("Triggered by PID {pid} (\"{HOSTILE_TEXT}\"), ")),
        "{line}"
    );
    assert!(
        line.contains(" pages") && line.contains(", loadavg: "),
        "{line}"
    );
}

#[test]
fn oomkill_names_the_victim_of_a_memory_cgroups_limit() {
    kill_seen("", "");
}

/// The tracepoint where the kernel has fentry or kprobes too (the VMs).
#[test]
fn oomkill_tracepoint_variant() {
    kill_seen("fentry,kprobe", "tracepoint oom:mark_victim");
}

/// The tracepoint's BTF form (the victim's task as its argument), for a
/// kernel without tracefs.
#[test]
fn oomkill_btf_variant() {
    require_root();
    let disable = "fentry,kprobe,tracepoint";
    let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
    if !testkit::feature_present(
        dry.status.success(),
        "mark_victim's BTF form with the victim's task",
        None,
    ) {
        return;
    }
    kill_seen(disable, "tp_btf mark_victim");
}
