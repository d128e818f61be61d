//! syncsnoop against syncs of the test's own: one of each call on a file
//! of its own (sync, syncfs, fsync, fdatasync, msync, sync_file_range) and
//! an fsync of a descriptor that is not open (EBADF): seven calls, each
//! seen once with its file and result.

use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use testkit::{unique, Finished, Traced};

const BIN: &str = env!("CARGO_BIN_EXE_syncsnoop");

fn start(args: &[&str], disable: &str) -> Traced {
    testkit::start_disabled(BIN, args, disable)
}

fn stop(tool: Traced) -> Finished {
    testkit::settle_and_stop(tool, Duration::from_millis(200))
}

/// The seven calls, on a new file in `dir`; returns its path.
fn syncs(dir: &Path) -> String {
    let path = dir.join(unique("sync-file-"));
    std::fs::write(&path, vec![b'x'; 8192]).unwrap();
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let fd = file.as_raw_fd();
    // SAFETY: calls on a descriptor this function owns, a mapping it makes
    // and unmaps, and a descriptor number that is not open (EBADF).
    unsafe {
        libc::sync();
        assert_eq!(libc::syncfs(fd), 0);
        assert_eq!(libc::fsync(fd), 0);
        assert_eq!(libc::fdatasync(fd), 0);
        let len = 4096;
        let map = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        );
        assert_ne!(map, libc::MAP_FAILED);
        *(map as *mut u8) = b'y';
        assert_eq!(libc::msync(map, len, libc::MS_SYNC), 0);
        libc::munmap(map, len);
        assert_eq!(
            libc::sync_file_range(fd, 0, 4096, libc::SYNC_FILE_RANGE_WRITE),
            0
        );
        assert_eq!(libc::fsync(-1), -1);
    }
    path.to_string_lossy().into_owned()
}

/// This thread's calls (the tests run side by side in one process).
fn mine(events: &[Value]) -> Vec<&Value> {
    // SAFETY: gettid has no arguments and cannot fail.
    let me = unsafe { libc::gettid() };
    events.iter().filter(|e| e["tid"] == me).collect()
}

/// Each call once, in order, with its file (msync's where the kernel can
/// find its mapping) and result.
fn check(events: &[Value], file: &str, msync_file: bool) {
    let seen = mine(events);
    let calls: Vec<&str> = seen.iter().map(|e| e["call"].as_str().unwrap()).collect();
    assert_eq!(
        calls,
        [
            "sync",
            "syncfs",
            "fsync",
            "fdatasync",
            "msync",
            "sync_file_range",
            "fsync"
        ],
        "{seen:#?}"
    );
    for e in &seen[..6] {
        assert_eq!(e["ret"], 0, "{e}");
        assert!(e["latency_ns"].as_u64().unwrap() > 0, "{e}");
        let named = match e["call"].as_str().unwrap() {
            "sync" => false,
            "msync" => msync_file,
            _ => true,
        };
        if named {
            assert_eq!(e["file"], file, "{e}");
        } else {
            assert!(e["file"].is_null(), "{e}");
        }
    }
    let bad = seen[6];
    assert_eq!(bad["ret"], -libc::EBADF, "{bad}");
    assert_eq!(bad["error"], "EBADF", "{bad}");
    assert_eq!(bad["fd"], -1, "{bad}");
    assert!(bad["file"].is_null(), "{bad}");
}

#[test]
fn syncsnoop_shows_each_sync_with_its_file_and_result() {
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let me = std::process::id().to_string();
    let json = start(&["--json", "-p", &me], "");
    let failed = start(&["--json", "-x", "-p", &me], "");
    let slow = start(&["--json", "-m", "60000", "-p", &me], "");
    let text = start(&["-p", &me], "");
    let file = syncs(&dir);
    let (json, failed, slow, text) = (stop(json), stop(failed), stop(slow), stop(text));
    let msync_file = !json.stderr.contains("msync() is shown without its file");
    check(&json.json(), &file, msync_file);
    // -x: the failed call alone; -m 60000: none took a minute.
    let failed = failed.json();
    assert_eq!(mine(&failed).len(), 1, "{failed:#?}");
    assert_eq!(mine(&failed)[0]["error"], "EBADF", "{failed:#?}");
    assert!(mine(&slow.json()).is_empty(), "{slow:?}");
    assert_eq!(
        text.stdout[0], "TIME     PID     COMM             CALL               LAT(ms)    RET FILE",
        "{:?}",
        text.stdout
    );
    let line = |call: &str| {
        text.stdout
            .iter()
            .find(|l| l.split_whitespace().nth(3) == Some(call) && l.contains(&file))
            .unwrap_or_else(|| panic!("{call}: {:?}", text.stdout))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(line("fdatasync")[5..], ["0", file.as_str()]);
}

/// Each variant: the calls' own tracepoints; tp_btf sys_enter/sys_exit
/// where they are missing; and msync without bpf_find_vma (no file, said
/// as the tool starts). The three side by side, on one run of the calls
/// (each load verifies the path walkers: seconds in a TCG guest).
#[test]
fn syncsnoop_hook_variants() {
    let dir = testkit::scratch_dir(env!("CARGO_TARGET_TMPDIR"));
    let me = std::process::id().to_string();
    let variants = [
        ("", "tracepoint syscalls:sys_enter_fdatasync"),
        ("tracepoint", "tp_btf sys_enter"),
        ("find_vma", "tracepoint syscalls:sys_exit_msync"),
    ];
    let tools: Vec<Traced> = variants
        .iter()
        .map(|(disable, _)| start(&["--json", "-v", "-p", &me], disable))
        .collect();
    let file = syncs(&dir);
    for ((disable, hook), tool) in variants.into_iter().zip(tools) {
        let done = stop(tool);
        assert!(done.stderr.contains(hook), "{hook}: {}", done.stderr);
        let without = done.stderr.contains("msync() is shown without its file");
        // bpf_find_vma came in 5.17.
        let expected = disable == "find_vma" || testkit::kernel_version() < (5, 17);
        assert_eq!(without, expected, "{disable}: {}", done.stderr);
        check(&done.json(), &file, !without);
    }
}
