//! filetop against dd copying a file of known size in blocks of known
//! size: as many reads and writes as blocks, on the right files.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use testkit::{
    require_root, run, run_with_env, stop_and_check_unloaded, unique, unique_copy, Traced,
};

/// Every row: BCC's order puts rows of writes only below every file read
/// in the interval, which on a busy machine are more than a screenful.
const ALL_ROWS: &str = "1000000";
const BIN: &str = env!("CARGO_BIN_EXE_filetop");
const BLOCKS: u64 = 150;

struct Files {
    dir: PathBuf,
    input: String,
    output: String,
}

impl Files {
    fn new() -> Files {
        let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
        let input = unique("fti");
        let output = unique("fto");
        std::fs::write(dir.join(&input), vec![7u8; (BLOCKS * 1024) as usize]).unwrap();
        Files { dir, input, output }
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.dir.join(&self.input));
        let _ = std::fs::remove_file(self.dir.join(&self.output));
    }
}

/// dd under a unique name copying `from` to `to` in 1 KiB blocks.
fn copy(dd: &Path, from: &Path, to: &Path) -> u32 {
    let mut child = Command::new(dd)
        .arg(format!("if={}", from.display()))
        .arg(format!("of={}", to.display()))
        .args(["bs=1024", &format!("count={BLOCKS}"), "status=none"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(child.wait().unwrap().success());
    pid
}

fn row<'a>(rows: &'a [Value], file: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r["file"] == file).collect()
}

/// Summed over intervals: reads, writes, read bytes, write bytes of a file.
fn totals(rows: &[&Value]) -> [u64; 4] {
    let mut t = [0; 4];
    for r in rows {
        for (i, k) in ["reads", "writes", "read_bytes", "write_bytes"]
            .iter()
            .enumerate()
        {
            t[i] += r[k].as_u64().unwrap();
        }
    }
    t
}

fn check_copy(env: &[(&str, &str)]) {
    require_root();
    let files = Files::new();
    let dd = unique_copy("ftd", "/bin/dd");
    let tool = Traced::start_command(
        Command::new(BIN)
            .args(["--json", "-r", ALL_ROWS])
            .envs(env.iter().copied()),
    );
    let pid = copy(
        &dd,
        &files.dir.join(&files.input),
        &files.dir.join(&files.output),
    );
    std::thread::sleep(Duration::from_millis(200));
    let f = stop_and_check_unloaded(tool);
    assert!(f.status.success(), "{f:?}");
    let rows = f.json();
    let input = row(&rows, &files.input);
    let output = row(&rows, &files.output);
    assert_eq!(totals(&input), [BLOCKS, 0, BLOCKS * 1024, 0], "{input:#?}");
    assert_eq!(
        totals(&output),
        [0, BLOCKS, 0, BLOCKS * 1024],
        "{output:#?}"
    );
    for r in input.iter().chain(&output) {
        assert_eq!(r["pid"], pid, "{r}");
        assert_eq!(r["tid"], pid, "{r}");
        assert_eq!(r["type"], "R", "{r}");
        assert_eq!(r["comm"], dd.file_name().unwrap().to_str().unwrap(), "{r}");
    }
}

#[test]
fn filetop_counts_a_copy() {
    let _turn = testkit::one_at_a_time();
    check_copy(&[]);
}

/// Kernels with fentry or kprobes, forced to the system call mode.
#[test]
fn filetop_system_call_mode_counts_the_same() {
    let _turn = testkit::one_at_a_time();
    check_copy(&[("BPFTOOLS_DISABLE", "fentry,kprobe")]);
}

#[test]
fn filetop_all_files_shows_devices_and_text_table() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let files = Files::new();
    let dd = unique_copy("fta", "/bin/dd");
    let input = files.dir.join(&files.input);
    // Without -a the device written to is not shown.
    let tool = Traced::start(BIN, &["-C", "-r", ALL_ROWS]);
    copy(&dd, &input, Path::new("/dev/null"));
    let plain = stop_and_check_unloaded(tool);
    let tool = Traced::start(BIN, &["-a", "-C", "-r", ALL_ROWS]);
    copy(&dd, &input, Path::new("/dev/null"));
    let all = stop_and_check_unloaded(tool);
    let comm = dd.file_name().unwrap().to_str().unwrap();
    let null_row = |f: &testkit::Finished| {
        f.stdout
            .iter()
            .find(|l| l.contains(comm) && l.ends_with(" null"))
            .cloned()
    };
    assert_eq!(null_row(&plain), None, "{plain:?}");
    let row = null_row(&all).unwrap_or_else(|| panic!("-a shows /dev/null: {all:?}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    // TID COMM READS WRITES R_Kb W_Kb T FILE
    assert_eq!(
        &cells[1..],
        &[
            comm,
            "0",
            &BLOCKS.to_string(),
            "0",
            &BLOCKS.to_string(),
            "O",
            "null"
        ][..]
    );
    let header = all.stdout.iter().find(|l| l.starts_with("TID")).unwrap();
    let words: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        words,
        ["TID", "COMM", "READS", "WRITES", "R_Kb", "W_Kb", "T", "FILE"]
    );
    assert!(
        all.stdout.iter().any(|l| l.contains(" loadavg: ")),
        "{all:?}"
    );
    assert!(
        !all.stdout.concat().contains('\x1b'),
        "-C: no screen clearing"
    );
}

#[test]
fn filetop_dry_run_says_where_it_counts() {
    let _turn = testkit::one_at_a_time();
    require_root();
    let f = run_with_env(
        BIN,
        &["--dry-run"],
        &[("BPFTOOLS_DISABLE", "fentry,kprobe")],
    );
    assert!(f.status.success(), "{f:?}");
    let out = f.stdout.join("\n");
    assert!(
        out.contains("tp_btf sys_exit") && out.contains("system call"),
        "{out}"
    );
    let f = run(BIN, &["--dry-run"]);
    let out = f.stdout.join("\n");
    let fentry = common::kernel::probe::fentry_target("vfs_read");
    assert!(
        out.contains(if fentry { "fexit vfs_read" } else { "sys_exit" }),
        "{out}"
    );
}

#[test]
fn filetop_names_each_rows_container() {
    use std::os::unix::fs::MetadataExt;
    require_root();
    let files = Files::new();
    let (docker, pod) = (
        testkit::FakeContainer::docker(),
        testkit::FakeContainer::kubernetes(),
    );
    let json = Traced::start(BIN, &["--json", "--containers", "-r", ALL_ROWS]);
    let text = Traced::start(BIN, &["--containers", "-C", "-r", ALL_ROWS]);
    let input = files.dir.join(&files.input);
    for (who, out) in [(&docker, "a"), (&pod, "b")] {
        let to = files.dir.join(format!("{}{out}", files.output));
        let script = r#"dd if="$1" of="$2" bs=1024 status=none"#;
        assert!(who
            .run(script, &[input.to_str().unwrap(), to.to_str().unwrap()])
            .success());
        let _ = std::fs::remove_file(&to);
    }
    std::thread::sleep(Duration::from_millis(1200));
    let (json, text) = (stop_and_check_unloaded(json), stop_and_check_unloaded(text));
    let rows = json.json();
    for (who, out) in [(&docker, "a"), (&pod, "b")] {
        let written = row(&rows, &format!("{}{out}", files.output));
        assert!(!written.is_empty(), "{rows:?}");
        for r in &written {
            assert_eq!(r["container"], who.short_id(), "{r}");
            assert_eq!(r["pod"].as_str(), who.pod.as_deref(), "{r}");
            assert_eq!(r["cgroup_id"], std::fs::metadata(&who.dir).unwrap().ino());
        }
        let line = text
            .stdout
            .iter()
            .find(|l| l.ends_with(&format!("{}{out}", files.output)));
        assert!(
            line.is_some_and(|l| l.starts_with(who.short_id())),
            "{:?}",
            text.stdout
        );
    }
    assert!(
        text.stdout
            .iter()
            .any(|l| l.starts_with("CONTAINER    TID")),
        "{:?}",
        text.stdout
    );
}
