//! swapin against swap-ins of the test's own (swap-work.c): 32 MiB of
//! pages written in a memory cgroup of 16 MiB with a swap file of the
//! test's own on, then read back twice: at least the pages beyond the
//! limit come back from swap, each a swap-in of the workload. Where the
//! kernel has no kprobes (this 6.18 machine), the tool's refusal instead.

use std::path::PathBuf;
use std::process::Command;

use testkit::unique;

const BIN: &str = env!("CARGO_BIN_EXE_swapin");
const TMP: &str = env!("CARGO_TARGET_TMPDIR");
const PAGES: u64 = 8192;
const LIMIT: u64 = 16 << 20;

/// A swap file of the test's own, on while it lives.
struct SwapFile(PathBuf);

impl SwapFile {
    fn on() -> SwapFile {
        use std::os::unix::fs::PermissionsExt;
        let path = testkit::scratch_dir(TMP).join(unique("swapin-swapfile-"));
        // Written, not sparse: swap refuses a file with holes.
        std::fs::write(&path, vec![0u8; 64 << 20]).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let swap = SwapFile(path);
        let status = Command::new("mkswap").arg(&swap.0).output().unwrap();
        assert!(status.status.success(), "mkswap: {status:?}");
        let c = std::ffi::CString::new(swap.0.to_str().unwrap()).unwrap();
        // SAFETY: swapon with a NUL-terminated path of ours.
        let r = unsafe { libc::swapon(c.as_ptr(), 0) };
        assert_eq!(r, 0, "swapon: {}", std::io::Error::last_os_error());
        swap
    }
}

impl Drop for SwapFile {
    fn drop(&mut self) {
        if let Ok(c) = std::ffi::CString::new(self.0.to_str().unwrap_or_default()) {
            // SAFETY: swapoff with a NUL-terminated path of ours.
            unsafe { libc::swapoff(c.as_ptr()) };
        }
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn swapin_counts_the_pages_read_back() {
    testkit::require_root();
    if !swapin::hooks_present() {
        // No kprobes: one line saying what is missing, exit 1, nothing
        // left loaded.
        let out = Command::new(BIN).args(["1", "1"]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("swapin needs a kprobe on swap_read_folio"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        return;
    }
    let _swap = SwapFile::on();
    let prog = testkit::build_c_program(env!("CARGO_MANIFEST_DIR"), TMP, "swap-work");
    let cage = testbed::MemoryCage::new(&unique("bpftools-swapin-"), LIMIT).unwrap();
    cage.allow_swap().unwrap();
    let (f, pid) = testkit::trace_pid(
        Command::new(&prog).arg(PAGES.to_string()),
        BIN,
        &["--json", "-v"],
        "",
        |p| cage.enter(p).unwrap(),
    );
    let read: u64 = f
        .json()
        .iter()
        .filter(|r| r["pid"] == pid)
        .inspect(|r| assert_eq!(r["comm"], "swap-work", "{r}"))
        .map(|r| r["count"].as_u64().unwrap())
        .sum();
    // The pages beyond the limit, at least, read back (by their faults
    // or those faults' readahead).
    let beyond = PAGES - LIMIT / 4096;
    assert!(
        read >= beyond / 2,
        "{read} swap-ins, {beyond} pages beyond the limit: {f:?}"
    );
}
