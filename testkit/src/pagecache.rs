//! What the page cache tools' tests (cachestat, cachetop) share: files on a
//! disk-backed file system, the page cache dropped, and workloads held
//! until the tool traces their pid.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// 4 KiB pages in a MiB.
pub const PAGES_PER_MIB: u64 = 256;

/// One measuring test at a time: the counts are system-wide, and dropping
/// the page cache must not land in another test's second read.
pub fn exclusive() -> MutexGuard<'static, ()> {
    static CACHE: Mutex<()> = Mutex::new(());
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// A file on a disk-backed file system (not tmpfs, which has no such page
/// cache traffic), in `tmp_dir`'s scratch directory, removed when dropped.
pub struct TestFile(pub PathBuf);

impl TestFile {
    /// A file of `mib` MiB, written and synced.
    pub fn new(tmp_dir: &str, prefix: &str, mib: u64) -> TestFile {
        let file = TestFile::named(tmp_dir, prefix);
        let chunk = vec![0x5au8; 1 << 20];
        let mut f = std::fs::File::create(&file.0).unwrap();
        for _ in 0..mib {
            f.write_all(&chunk).unwrap();
        }
        f.sync_all().unwrap();
        file
    }

    /// A path of its own for a file a workload makes.
    pub fn named(tmp_dir: &str, prefix: &str) -> TestFile {
        TestFile(crate::scratch_dir(tmp_dir).join(crate::unique(prefix)))
    }

    pub fn path(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for TestFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

pub fn drop_page_cache() {
    std::fs::write("/proc/sys/vm/drop_caches", "1").unwrap();
}

/// A process that runs `script` (as `exec`, keeping its pid) once released.
pub struct Held {
    child: Child,
    gate: Option<ChildStdin>,
}

impl Held {
    pub fn new(script: &str) -> Held {
        let mut child = Command::new("sh")
            .args(["-c", &format!("read go; exec {script}")])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let gate = child.stdin.take();
        Held { child, gate }
    }

    pub fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// Lets the script run, and waits for it to finish.
    pub fn run(mut self) {
        writeln!(self.gate.take().unwrap(), "go").unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the workload did not finish");
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
