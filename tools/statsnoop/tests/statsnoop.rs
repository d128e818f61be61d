//! statsnoop against stats of the test's own: a unique missing path
//! (ENOENT), an existing file by stat(1) (statx) and by Python's os.stat
//! and os.lstat (newfstatat), a statfs(), each exactly once.

use std::ffi::CString;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use testkit::{unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_statsnoop");

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

fn of_path<'a>(events: &'a [Value], path: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["path"] == path).collect()
}

/// The calls: (missing path, file, statfs path); each made once.
fn calls(dir: &std::path::Path) -> (String, String, String) {
    let missing = dir
        .join(unique("st-missing-"))
        .to_string_lossy()
        .into_owned();
    let file = dir.join(unique("st-file-"));
    std::fs::write(&file, b"x").unwrap();
    let file = file.to_string_lossy().into_owned();
    let fs = dir.join(unique("st-fs-"));
    std::fs::create_dir_all(&fs).unwrap();
    let fs = fs.to_string_lossy().into_owned();
    // glibc's stat(): ENOENT.
    let c = CString::new(missing.as_str()).unwrap();
    // SAFETY: a valid C string and an all-zero stat buffer.
    let r = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::stat(c.as_ptr(), &mut st)
    };
    assert_eq!(r, -1);
    let c = CString::new(fs.as_str()).unwrap();
    // SAFETY: as above, for statfs.
    let r = unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        libc::statfs(c.as_ptr(), &mut st)
    };
    assert_eq!(r, 0);
    assert!(Command::new("stat")
        .args(["-c", "%s", &file])
        .output()
        .unwrap()
        .status
        .success());
    let py = format!("import os\nos.stat({file:?})\nos.lstat({file:?})\n");
    assert!(Command::new("python3")
        .args(["-c", &py])
        .status()
        .unwrap()
        .success());
    (missing, file, fs)
}

fn check(events: &[Value], missing: &str, file: &str, fs: &str, me: u32) {
    let m = of_path(events, missing);
    assert_eq!(m.len(), 1, "{missing}: {events:#?}");
    assert_eq!(m[0]["ret"], -1, "{}", m[0]);
    assert_eq!(m[0]["errno"], libc::ENOENT, "{}", m[0]);
    assert_eq!(m[0]["error"], "ENOENT", "{}", m[0]);
    assert_eq!(m[0]["pid"], me, "{}", m[0]);
    let f = of_path(events, fs);
    assert_eq!(f.len(), 1, "{fs}: {events:#?}");
    assert_eq!(f[0]["call"], "statfs", "{}", f[0]);
    assert_eq!(f[0]["ret"], 0);
    // stat(1) once, os.stat and os.lstat once each: three, all found.
    let seen = of_path(events, file);
    assert_eq!(seen.len(), 3, "{file}: {events:#?}");
    assert!(
        seen.iter().all(|e| e["ret"] == 0 && e["errno"] == 0),
        "{seen:#?}"
    );
    assert!(seen.iter().any(|e| e["comm"] == "stat"), "{seen:#?}");
    assert_eq!(
        seen.iter().filter(|e| e["comm"] == "python3").count(),
        2,
        "{seen:#?}"
    );
}

#[test]
fn statsnoop_shows_each_stat_with_its_result() {
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let json = start(&["--json"], "");
    let failed = start(&["--json", "-x"], "");
    let text = start(&["-t"], "");
    let (missing, file, fs) = calls(&dir);
    let (json, failed, text) = (stop(json), stop(failed), stop(text));
    check(&json.json(), &missing, &file, &fs, std::process::id());
    let failed = failed.json();
    assert_eq!(of_path(&failed, &missing).len(), 1, "{failed:#?}");
    assert!(of_path(&failed, &file).is_empty(), "{failed:#?}");
    assert!(failed.iter().all(|e| e["ret"] == -1), "{failed:#?}");
    assert!(
        text.stdout[0].starts_with("TIME(s)        PID     COMM              RET ERR PATH"),
        "{:?}",
        text.stdout
    );
    let line = text
        .stdout
        .iter()
        .find(|l| l.ends_with(&missing))
        .unwrap_or_else(|| panic!("{:?}", text.stdout));
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        cells[cells.len() - 3..],
        ["-1", "2", missing.as_str()],
        "{line}"
    );
}

/// Each variant: tp_btf sys_exit; the calls' tracepoints at exit with the
/// registers; at entry and exit.
#[test]
fn statsnoop_hook_variants() {
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    for (disable, hook) in [
        ("", "tp_btf sys_exit"),
        ("tp_btf", "sys_exit_newfstatat"),
        ("tp_btf,task_pt_regs", "sys_enter_newfstatat"),
    ] {
        let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", disable)]);
        assert!(dry.status.success(), "{dry:?}");
        assert!(dry.stdout.join("\n").contains(hook), "{hook}: {dry:?}");
        let me = std::process::id().to_string();
        let tool = start(&["--json", "-p", &me], disable);
        let (missing, _, fs) = calls(&dir);
        let events = stop(tool).json();
        assert_eq!(
            of_path(&events, &missing).len(),
            1,
            "{disable}: {events:#?}"
        );
        assert_eq!(of_path(&events, &fs).len(), 1, "{disable}: {events:#?}");
        // -p: this process's calls only (not stat(1)'s or python's).
        assert!(
            events.iter().all(|e| e["pid"] == std::process::id()),
            "{disable}: {events:#?}"
        );
    }
}
