//! The processes the bench starts (each one held by a guard that kills and
//! reaps it), and what /proc says about a process.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// A child process that is killed and reaped when the guard goes, on every
/// path out (errors and panics included).
pub struct Guarded {
    child: Child,
}

impl Guarded {
    pub fn spawn(cmd: &mut Command) -> Result<Guarded> {
        // SAFETY: prctl and signal are async-signal-safe and touch no
        // memory of ours. PR_SET_PDEATHSIG makes the kernel kill the child
        // if the bench dies before the guard can act (killed, or crashed).
        // SIGINT back to its default: a shell starting the bench in the
        // background without job control leaves it ignored, and exec keeps
        // an ignored signal ignored, so `interrupt` would not be heard.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0
                    || libc::signal(libc::SIGINT, libc::SIG_DFL) == libc::SIG_ERR
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .with_context(|| format!("starting {:?}", cmd.get_program()))?;
        Ok(Guarded { child })
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Sends SIGINT and waits up to `limit` for the process to end; returns
    /// the time from the signal to the reaped exit, or None when it had to
    /// be killed.
    pub fn interrupt(&mut self, limit: Duration) -> Result<Option<Duration>> {
        if let Some(status) = self.child.try_wait()? {
            bail!("it had ended before it was stopped ({status})");
        }
        let sent = Instant::now();
        signal(self.child.id(), libc::SIGINT);
        while sent.elapsed() < limit {
            if self.child.try_wait()?.is_some() {
                return Ok(Some(sent.elapsed()));
            }
            thread::sleep(Duration::from_micros(500));
        }
        let _ = self.child.kill();
        self.child.wait()?;
        Ok(None)
    }

    /// Waits up to `limit` for the process to end by itself, and kills it
    /// if it does not; true if it ended.
    pub fn wait_for(&mut self, limit: Duration) -> Result<bool> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.child.try_wait()?.is_some() {
                return Ok(true);
            }
            thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        self.child.wait()?;
        Ok(false)
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) with a pid and a valid signal number; no memory.
    unsafe { libc::kill(pid as libc::pid_t, sig) };
}

/// Makes orphaned descendants (a tracer's own children) our children, so
/// that the final check finds any process the bench started, however deep.
pub fn become_subreaper() -> Result<()> {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error()).context("prctl(PR_SET_CHILD_SUBREAPER)");
    }
    Ok(())
}

/// Our child processes still alive (or unreaped): pid and command line.
pub fn children() -> Vec<(u32, String)> {
    let me = std::process::id();
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| parent(pid) == Some(me))
        .map(|pid| (pid, cmdline(pid)))
        .collect()
}

/// Kills and reaps a child found by [`children`].
pub fn kill_and_reap(pid: u32) {
    signal(pid, libc::SIGKILL);
    let mut status = 0;
    // SAFETY: waitpid on our own child, with a valid status pointer.
    unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
}

fn parent(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields follow the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

pub fn cmdline(pid: u32) -> String {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let s = String::from_utf8_lossy(&raw).replace('\0', " ");
    let s = s.trim();
    if s.is_empty() {
        fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| format!("[{}]", c.trim()))
            .unwrap_or_default()
    } else {
        s.chars().take(160).collect()
    }
}

/// CPU time of all of a process's threads, in ns (the first field of each
/// task's schedstat: time spent on a CPU).
pub fn cpu_ns(pid: u32) -> Option<u64> {
    let tasks = fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = 0;
    for task in tasks.flatten() {
        // A thread that ended between the listing and the read counts 0.
        let ns = fs::read_to_string(task.path().join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok());
        total += ns.unwrap_or(0);
    }
    Some(total)
}

/// Peak resident set size (VmHWM), in KiB.
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmHWM:")
}

/// Resident set size now (VmRSS), in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(pid, "VmRSS:")
}

fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Ids of the BPF programs a process holds through its file descriptors
/// (program fds and link fds both show `prog_id` in fdinfo).
pub fn prog_ids_held(pid: u32) -> BTreeSet<u32> {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/fdinfo")) else {
        return BTreeSet::new();
    };
    dir.filter_map(|e| fs::read_to_string(e.ok()?.path()).ok())
        .filter_map(|info| prog_id_in_fdinfo(&info))
        .collect()
}

fn prog_id_in_fdinfo(info: &str) -> Option<u32> {
    info.lines()
        .find_map(|l| l.strip_prefix("prog_id:"))?
        .trim()
        .parse()
        .ok()
}

/// For each of `ids`, the processes holding it: pid and command line.
pub fn holders(ids: &BTreeSet<u32>) -> BTreeMap<u32, Vec<(u32, String)>> {
    let mut found: BTreeMap<u32, Vec<(u32, String)>> = BTreeMap::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return found;
    };
    for pid in dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok()) {
        for id in prog_ids_held(pid).intersection(ids) {
            found.entry(*id).or_default().push((pid, cmdline(pid)));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_prog_id_from_fdinfo() {
        let info = "pos:\t0\nflags:\t02000002\nmnt_id:\t16\nino:\t1057\nlink_type:\tperf\nlink_id:\t5\nprog_tag:\tabc\nprog_id:\t42\n";
        assert_eq!(prog_id_in_fdinfo(info), Some(42));
        assert_eq!(prog_id_in_fdinfo("pos:\t0\nflags:\t0\n"), None);
    }

    #[test]
    fn reads_our_own_figures() {
        let me = std::process::id();
        assert!(cpu_ns(me).is_some_and(|ns| ns > 0));
        assert!(peak_rss_kib(me).is_some_and(|kib| kib > 0));
        assert!(parent(me).is_some());
    }

    #[test]
    fn guard_reaps_its_child() {
        let mut g = Guarded::spawn(Command::new("sleep").arg("30")).unwrap();
        let pid = g.id();
        assert!(children().iter().any(|(p, _)| *p == pid));
        let took = g.interrupt(Duration::from_secs(5)).unwrap();
        assert!(took.is_some(), "sleep ends on SIGINT");
        drop(g);
        assert!(!children().iter().any(|(p, _)| *p == pid));
    }
}
