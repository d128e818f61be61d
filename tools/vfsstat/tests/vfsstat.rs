//! vfsstat against a program doing a known number of reads, writes,
//! fsyncs, opens and creates.

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use testkit::{require_root, run, run_with_env, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_vfsstat");
const WRITES: u64 = 300;
const FSYNCS: u64 = 3;
const READS: u64 = 200;

/// The sums of each counter over every interval printed.
fn sums(rows: &[Value]) -> [u64; 5] {
    let mut s = [0; 5];
    for r in rows {
        for (i, k) in ["read", "write", "fsync", "open", "create"]
            .iter()
            .enumerate()
        {
            s[i] += r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        }
    }
    s
}

/// The counts vfsstat -p saw of one run of vfs-work.
fn counts(env: &[(&str, &str)]) -> ([u64; 5], String) {
    require_root();
    let prog = testkit::build_c_program(
        env!("CARGO_MANIFEST_DIR"),
        env!("CARGO_TARGET_TMPDIR"),
        "vfs-work",
    );
    let file = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR")).join(testkit::unique("vfs"));
    let f = testkit::trace_stopped(
        Command::new(&prog)
            .arg(&file)
            .args([WRITES, FSYNCS, READS].map(|n| n.to_string())),
        |pid| {
            let mut tool = Command::new(BIN);
            tool.args(["--json", "-p", &pid.to_string(), "1"])
                .envs(env.iter().copied());
            tool
        },
    );
    let _ = std::fs::remove_file(&file);
    (sums(&f.json()), f.stderr)
}

#[test]
fn vfsstat_counts_known_calls() {
    let _turn = testkit::one_at_a_time();
    let (s, stderr) = counts(&[]);
    assert_eq!(
        &s[..4],
        &[READS, WRITES, FSYNCS, 2],
        "read write fsync open: {s:?}"
    );
    // An open(O_CREAT) that creates calls the file system's create, not
    // vfs_create: counted as a create only where vfsstat counts at the
    // system calls (FMODE_CREATED).
    let syscalls = stderr.contains("system call mode");
    assert_eq!(s[4], u64::from(syscalls), "creates: {s:?} {stderr}");
}

/// Kernels with fentry or kprobes: forced to the system call mode, as on
/// this machine, and there following the task's pointers as before 5.11.
#[test]
fn vfsstat_system_call_mode_counts_creates() {
    let _turn = testkit::one_at_a_time();
    let (s, stderr) = counts(&[("BPFTOOLS_DISABLE", "fentry,kprobe,current_task_btf")]);
    assert!(stderr.contains("system call mode"), "{stderr}");
    assert_eq!(s, [READS, WRITES, FSYNCS, 2, 1]);
}

#[test]
fn vfsstat_dry_run_says_where_it_counts() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let f = run(BIN, &["--dry-run"]);
    assert!(f.status.success(), "{f:?}");
    let out = f.stdout.join("\n");
    let probe = common::kernel::probe::fentry_target("vfs_read");
    assert!(
        out.contains(if probe {
            "fentry vfs_read"
        } else {
            "tp_btf sys_exit"
        }),
        "{out}"
    );
    let f = run_with_env(
        BIN,
        &["--dry-run"],
        &[("BPFTOOLS_DISABLE", "fentry,kprobe")],
    );
    let out = f.stdout.join("\n");
    assert!(
        out.contains("tp_btf sys_exit") && out.contains("system calls"),
        "{out}"
    );
}

#[test]
fn vfsstat_text_lines_each_interval() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let tool = Traced::start(BIN, &["1", "2"]);
    let f = tool.wait(Duration::from_secs(20));
    assert!(f.status.success(), "{f:?}");
    let words: Vec<&str> = f.stdout[0].split_whitespace().collect();
    assert_eq!(
        words,
        ["TIME", "READ/s", "WRITE/s", "FSYNC/s", "OPEN/s", "CREATE/s"]
    );
    assert_eq!(f.stdout.len(), 3, "a header and two intervals: {f:?}");
    assert!(
        f.stdout[1..]
            .iter()
            .all(|l| l.split_whitespace().count() == 6),
        "{f:?}"
    );
}
