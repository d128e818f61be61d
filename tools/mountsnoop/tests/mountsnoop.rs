//! mountsnoop against mounts of the test's own: a tmpfs mounted with known
//! flags and data and unmounted, a mount that fails, and a tmpfs made with
//! the new mount API (fsopen, fsmount, move_mount), each exactly once.

use std::ffi::CString;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use testkit::{unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_mountsnoop");

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// The calls, each checked; returns the two mount points.
fn mounts(dir: &Path) -> (String, String) {
    let a = dir.join(unique("mnt-a-"));
    let b = dir.join(unique("mnt-b-"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let (a, b) = (
        a.to_str().unwrap().to_string(),
        b.to_str().unwrap().to_string(),
    );
    // SAFETY: mount(2), umount2(2) and the new API's calls with valid C
    // strings; the descriptors made are closed.
    unsafe {
        let r = libc::mount(
            c("none").as_ptr(),
            c(&a).as_ptr(),
            c("tmpfs").as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            c("size=1m").as_ptr().cast(),
        );
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
        let r = libc::mount(
            c("none").as_ptr(),
            c(&b).as_ptr(),
            c("nosuchfs").as_ptr(),
            0,
            std::ptr::null(),
        );
        assert_eq!(r, -1);
        assert_eq!(libc::umount2(c(&a).as_ptr(), libc::MNT_DETACH), 0);
        let fs = libc::syscall(libc::SYS_fsopen, c("tmpfs").as_ptr(), 1) as i32;
        assert!(fs >= 0, "fsopen: {}", std::io::Error::last_os_error());
        // FSCONFIG_CMD_CREATE
        let r = libc::syscall(libc::SYS_fsconfig, fs, 6, 0, 0, 0);
        assert_eq!(r, 0, "fsconfig: {}", std::io::Error::last_os_error());
        // FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV
        let m = libc::syscall(libc::SYS_fsmount, fs, 1, 0x4) as i32;
        assert!(m >= 0, "fsmount: {}", std::io::Error::last_os_error());
        // MOVE_MOUNT_F_EMPTY_PATH
        let r = libc::syscall(
            libc::SYS_move_mount,
            m,
            c("").as_ptr(),
            libc::AT_FDCWD,
            c(&b).as_ptr(),
            0x4,
        );
        assert_eq!(r, 0, "move_mount: {}", std::io::Error::last_os_error());
        libc::close(m);
        libc::close(fs);
        assert_eq!(libc::umount2(c(&b).as_ptr(), 0), 0);
    }
    (a, b)
}

fn mnt_ns() -> u64 {
    let link = std::fs::read_link("/proc/self/ns/mnt").unwrap();
    let s = link.to_string_lossy();
    s.trim_start_matches("mnt:[")
        .trim_end_matches(']')
        .parse()
        .unwrap()
}

#[test]
fn mountsnoop_shows_each_call_as_c() {
    // The tests' calls are all this process's: one test at a time.
    let _turn = testkit::one_at_a_time();
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let json = testkit::start_disabled(BIN, &["--json"], "");
    let text = testkit::start_disabled(BIN, &["-P"], "");
    let failed = testkit::start_disabled(BIN, &["--json", "-x"], "");
    let (a, b) = mounts(&dir);
    let (json, text, failed) = (stop(json), stop(text), stop(failed));
    let me = std::process::id();
    let ours: Vec<Value> = json.json().into_iter().filter(|e| e["pid"] == me).collect();
    let calls: Vec<&str> = ours.iter().map(|e| e["call"].as_str().unwrap()).collect();
    assert_eq!(
        calls,
        [
            "mount",
            "mount",
            "umount",
            "fsopen",
            "fsmount",
            "move_mount",
            "umount"
        ],
        "{ours:#?}"
    );
    assert!(ours.iter().all(|e| e["mnt_ns"] == mnt_ns()), "{ours:#?}");
    let lines: Vec<&String> = text
        .stdout
        .iter()
        .filter(|l| l.split_whitespace().nth(1) == Some(&me.to_string()))
        .collect();
    let call = |i: usize| {
        lines[i]
            .split_once(&format!("{} ", mnt_ns()))
            .unwrap()
            .1
            .trim()
    };
    assert_eq!(lines.len(), 7, "{:?}", text.stdout);
    assert_eq!(
        call(0),
        format!("mount(\"none\", \"{a}\", \"tmpfs\", MS_NOSUID|MS_NODEV, \"size=1m\") = 0")
    );
    assert_eq!(
        call(1),
        format!("mount(\"none\", \"{b}\", \"nosuchfs\", 0x0, \"\") = -ENODEV")
    );
    assert_eq!(call(2), format!("umount(\"{a}\", MNT_DETACH) = 0"));
    assert!(
        call(3).starts_with("fsopen(\"tmpfs\", FSOPEN_CLOEXEC) = "),
        "{}",
        call(3)
    );
    assert!(
        call(4).contains(", FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV) = "),
        "{}",
        call(4)
    );
    assert!(
        call(5).ends_with(&format!(
            ", \"\", AT_FDCWD, \"{b}\", MOVE_MOUNT_F_EMPTY_PATH) = 0"
        )),
        "{}",
        call(5)
    );
    assert_eq!(call(6), format!("umount(\"{b}\", 0x0) = 0"));
    assert!(
        text.stdout[0].contains("PCOMM            PPID"),
        "{:?}",
        text.stdout
    );
    // -x: the mount that failed only.
    let failures: Vec<Value> = failed
        .json()
        .into_iter()
        .filter(|e| e["pid"] == me)
        .collect();
    assert_eq!(failures.len(), 1, "{failures:#?}");
    assert_eq!(failures[0]["fstype"], "nosuchfs");
    assert_eq!(failures[0]["ret"], -libc::ENODEV);
}

/// Without bpf_task_pt_regs: the arguments kept at entry.
#[test]
fn mountsnoop_entry_exit_variant() {
    let _turn = testkit::one_at_a_time();
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let dry = testkit::run_with_env(BIN, &["--dry-run"], &[("BPFTOOLS_DISABLE", "task_pt_regs")]);
    assert!(dry.stdout.join("\n").contains("sys_enter_mount"), "{dry:?}");
    let me = std::process::id().to_string();
    let tool = testkit::start_disabled(BIN, &["--json", "-p", &me], "task_pt_regs");
    let (a, _) = mounts(&dir);
    let events = stop(tool).json();
    assert_eq!(events.len(), 7, "{events:#?}");
    assert_eq!(events[0]["target"], a.as_str(), "{}", events[0]);
    assert_eq!(events[0]["data"], "size=1m", "{}", events[0]);
    assert_eq!(events[0]["flags"], "MS_NOSUID|MS_NODEV", "{}", events[0]);
}
