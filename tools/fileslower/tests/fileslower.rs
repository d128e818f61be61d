//! fileslower against dd: every read and write of a copy at threshold 0,
//! and a read blocked on a pipe for 300 ms above a 100 ms threshold.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use testkit::{
    require_root, run, run_with_env, stop_and_check_unloaded, unique, unique_copy, Traced,
};

const BIN: &str = env!("CARGO_BIN_EXE_fileslower");
const BLOCKS: u64 = 40;

fn comm(p: &Path) -> &str {
    p.file_name().unwrap().to_str().unwrap()
}

fn of_comm<'a>(rows: &'a [Value], comm: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r["comm"] == comm).collect()
}

fn check_copy(env: &[(&str, &str)]) {
    require_root();
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let (input, output) = (unique("fsi"), unique("fso"));
    std::fs::write(dir.join(&input), vec![1u8; (BLOCKS * 2048) as usize]).unwrap();
    let dd = unique_copy("fsd", "/bin/dd");
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "0"])
            .envs(env.iter().copied()),
    );
    let status = Command::new(&dd)
        .arg(format!("if={}", dir.join(&input).display()))
        .arg(format!("of={}", dir.join(&output).display()))
        .args(["bs=2048", &format!("count={BLOCKS}"), "status=none"])
        .status()
        .unwrap();
    assert!(status.success());
    std::thread::sleep(Duration::from_millis(100));
    let f = stop_and_check_unloaded(tool);
    let _ = std::fs::remove_file(dir.join(&input));
    let _ = std::fs::remove_file(dir.join(&output));
    let rows = f.json();
    let mine = of_comm(&rows, comm(&dd));
    let reads: Vec<&&Value> = mine
        .iter()
        .filter(|r| r["file"] == input.as_str())
        .collect();
    let writes: Vec<&&Value> = mine
        .iter()
        .filter(|r| r["file"] == output.as_str())
        .collect();
    assert_eq!(reads.len() as u64, BLOCKS, "{mine:#?}");
    assert_eq!(writes.len() as u64, BLOCKS, "{mine:#?}");
    for (i, r) in reads.iter().enumerate() {
        assert_eq!(
            (r["op"].as_str(), r["bytes"].as_u64()),
            (Some("R"), Some(2048)),
            "{r}"
        );
        assert_eq!(r["offset"], i as u64 * 2048, "{r}");
    }
    for (i, w) in writes.iter().enumerate() {
        assert_eq!(
            (w["op"].as_str(), w["bytes"].as_u64()),
            (Some("W"), Some(2048)),
            "{w}"
        );
        assert_eq!(w["offset"], i as u64 * 2048, "{w}");
        assert_eq!(w["type"], "R", "{w}");
    }
}

#[test]
fn fileslower_every_read_and_write_at_zero() {
    let _turn = testkit::one_at_a_time();
    check_copy(&[]);
}

/// Kernels with fentry or kprobes, forced to the system call mode.
#[test]
fn fileslower_system_call_mode_sees_the_same() {
    let _turn = testkit::one_at_a_time();
    check_copy(&[("BPFTOOLS_DISABLE", "fentry,kprobe")]);
}

/// dd reading a pipe that stays empty for `ms` after dd blocks in its read
/// (timed from then: under TCG, dd's start alone can outlast a fixed sleep,
/// and its read would then not block at all).
fn blocked_read(dd: &Path, ms: u64) {
    use std::io::Write;
    let mut reader = Command::new(dd)
        .args(["of=/dev/null", "status=none"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let syscall = format!("/proc/{}/syscall", reader.id());
    let reading = format!("{} ", libc::SYS_read);
    let blocked = (0..1000).any(|_| {
        std::thread::sleep(Duration::from_millis(5));
        std::fs::read_to_string(&syscall).is_ok_and(|s| s.starts_with(&reading))
    });
    assert!(blocked, "dd never blocked in read(2)");
    std::thread::sleep(Duration::from_millis(ms));
    let mut pipe = reader.stdin.take().unwrap();
    pipe.write_all(b"x\n").unwrap();
    drop(pipe);
    assert!(reader.wait().unwrap().success());
}

#[test]
fn fileslower_threshold_and_other_files() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let dd: PathBuf = unique_copy("fsp", "/bin/dd");
    let tool = Traced::start(BIN, &["--json", "-a", "100"]);
    blocked_read(&dd, 300);
    let all = stop_and_check_unloaded(tool);
    let tool = Traced::start(BIN, &["--json", "100"]);
    blocked_read(&dd, 300);
    let regular = stop_and_check_unloaded(tool);
    let rows = all.json();
    let slow = of_comm(&rows, comm(&dd));
    assert_eq!(
        slow.len(),
        1,
        "only the blocked read passes 100 ms: {rows:#?}"
    );
    assert_eq!(slow[0]["op"], "R");
    assert_eq!(slow[0]["type"], "O", "a pipe");
    let ms = slow[0]["latency_ms"].as_f64().unwrap();
    assert!(ms >= 250.0, "{ms} ms");
    assert!(
        of_comm(&regular.json(), comm(&dd)).is_empty(),
        "a pipe needs -a"
    );
}

/// The system call mode's exit tells a quick call from its CPU's run queue
/// clock where the kernel's configuration gives the tick (the note says
/// so), without a second clock read: a read blocked 15 ms, over the
/// default 10 ms, must still be seen, as with that turned off.
#[test]
fn fileslower_a_blocked_read_over_the_threshold_is_seen() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    let config_known = Path::new(&format!("/boot/config-{}", release.trim())).exists()
        || Path::new("/proc/config.gz").exists();
    let dd: PathBuf = unique_copy("fsq", "/bin/dd");
    for disable in ["fentry,kprobe", "fentry,kprobe,tick"] {
        let env = ("BPFTOOLS_DISABLE", disable);
        let note = run_with_env(BIN, &["--dry-run"], &[env]).stdout.join("\n");
        let quick = note.contains("is known quick without a second clock read");
        if disable.ends_with("tick") {
            assert!(
                note.contains("every call's end reads the clock: turned off"),
                "{note}"
            );
        } else if config_known && testkit::kernel_version() >= (5, 11) {
            assert!(quick, "the kernel's configuration is there: {note}");
        }
        let tool = Traced::start_command(Command::new(BIN).args(["--json", "-a"]).envs([env]));
        blocked_read(&dd, 15);
        let rows = stop_and_check_unloaded(tool).json();
        let reads: Vec<_> = of_comm(&rows, comm(&dd))
            .into_iter()
            .filter(|r| r["op"] == "R")
            .collect();
        assert_eq!(
            reads.len(),
            1,
            "{disable}, quick path {quick}: the read: {rows:#?}"
        );
        let ms = reads[0]["latency_ms"].as_f64().unwrap();
        assert!(ms >= 15.0, "{disable}: {ms} ms");
    }
}

#[test]
fn fileslower_dry_run_and_bcc_header() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let f = run_with_env(
        BIN,
        &["--dry-run"],
        &[("BPFTOOLS_DISABLE", "fentry,kprobe")],
    );
    assert!(f.status.success(), "{f:?}");
    let out = f.stdout.join("\n");
    // tp_btf with task storage (5.11+), else raw_tp.
    let hook = if common::kernel::probe::task_storage() {
        "tp_btf"
    } else {
        "raw_tp"
    };
    assert!(
        out.contains(&format!("{hook} sys_enter")) && out.contains(&format!("{hook} sys_exit")),
        "{out}"
    );
    let f = run(BIN, &["--dry-run"]);
    let fentry = common::kernel::probe::fentry_target("vfs_read");
    let out = f.stdout.join("\n");
    assert!(
        out.contains(if fentry {
            "fexit vfs_read"
        } else {
            "sys_enter"
        }),
        "{out}"
    );
    let tool = Traced::start(BIN, &[]);
    let f = stop_and_check_unloaded(tool);
    let words: Vec<&str> = f.stdout[0].split_whitespace().collect();
    assert_eq!(
        words,
        ["TIME(s)", "COMM", "TID", "D", "BYTES", "LAT(ms)", "FILENAME"]
    );
}

/// With its output in a file, at threshold 0, the tool's own writes of that
/// output would feed back into what it traces: it leaves itself out.
#[test]
fn fileslower_to_a_file_shows_none_of_its_own_writes() {
    require_root();
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let out = dir.join(unique("fs-self"));
    let mut child = Command::new(BIN)
        .args(["--json", "0"])
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Attached once its banner is out (on stderr with --json).
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("Ctrl-C") {
        line.clear();
        let n = std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
        assert!(n > 0, "fileslower ended before its banner");
    }
    let dd = unique_copy("fss", "/bin/dd");
    let written = unique("fs-self-dd");
    let status = Command::new(&dd)
        .args(["if=/dev/zero", "bs=512", "count=200", "status=none"])
        .arg(format!("of={}", dir.join(&written).display()))
        .status()
        .unwrap();
    assert!(status.success());
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill with our own child's pid.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    assert!(child.wait().unwrap().success());
    let rows: Vec<Value> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let writes = of_comm(&rows, comm(&dd))
        .into_iter()
        .filter(|r| r["file"] == written.as_str() && r["op"] == "W")
        .count();
    assert_eq!(writes, 200, "dd's writes: {rows:?}");
    let own: Vec<&Value> = rows.iter().filter(|r| r["pid"] == pid).collect();
    assert!(own.is_empty(), "its own writes: {own:?}");
}
