//! A command to trace (opensnoop --exec, memleak -c): a child forked before
//! the probes load and held before its exec until they are attached, so
//! its pid can be filtered on and nothing it does is missed. It ends with
//! the tool, and its exit status becomes the tool's, as with time(1).

use std::cell::Cell;
use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// A forked command waiting for [`Held::release`].
pub struct Held {
    pid: libc::pid_t,
    /// None once released.
    release: Option<OwnedFd>,
    /// Read end of a close-on-exec pipe: EOF once the exec succeeded, the
    /// errno if it failed.
    exec_error: OwnedFd,
    program: String,
}

/// Finds `program` the way execvp would, so a typo fails before any fork.
fn resolve(program: &OsString) -> Result<PathBuf> {
    let path = Path::new(program);
    if program.as_bytes().contains(&b'/') {
        if path.is_file() {
            return Ok(path.to_path_buf());
        }
        bail!("no such file: {}", path.display());
    }
    let search = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&search)
        .map(|dir| dir.join(path))
        .find(|p| p.is_file())
        .with_context(|| format!("command not found: {}", path.display()))
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("starting the command: pipe");
    }
    // SAFETY: pipe2 returned two fresh descriptors that we now own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Held {
    pub fn spawn(argv: &[OsString]) -> Result<Held> {
        let Some(first) = argv.first() else {
            bail!("the command to run is empty");
        };
        let program = CString::new(resolve(first)?.as_os_str().as_bytes())
            .context("the command's name contains a NUL byte")?;
        let args: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .context("an argument of the command contains a NUL byte")?;
        let mut ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let (wait_end, release) = pipe()?;
        let (exec_error, error_end) = pipe()?;

        // SAFETY: the tool is single-threaded here; the child calls only
        // async-signal-safe functions (close, dup2, read, write, execv,
        // _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(std::io::Error::last_os_error()).context("starting the command: fork");
        }
        if pid == 0 {
            // SAFETY: see above; the child never returns from this block.
            unsafe {
                libc::close(release.as_raw_fd());
                libc::close(exec_error.as_raw_fd());
                // The tool's stop handlers do not belong to the command.
                for sig in crate::signals::STOP_SIGNALS {
                    libc::signal(sig, libc::SIG_DFL);
                }
                let mut byte = 0u8;
                // Its output goes to our stderr: our stdout is the trace.
                libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO);
                if libc::read(wait_end.as_raw_fd(), (&mut byte as *mut u8).cast(), 1) == 1 {
                    libc::execv(program.as_ptr(), ptrs.as_ptr());
                    let errno = *libc::__errno_location();
                    libc::write(
                        error_end.as_raw_fd(),
                        (&errno as *const i32).cast(),
                        std::mem::size_of::<i32>(),
                    );
                }
                libc::_exit(127);
            }
        }
        drop(wait_end);
        drop(error_end);
        Ok(Held {
            pid,
            release: Some(release),
            exec_error,
            program: first.to_string_lossy().into_owned(),
        })
    }

    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Lets the child exec, and reports an exec that failed. Dropping a
    /// Held without this ends the child before it runs anything (it reads
    /// EOF and exits) and reaps it.
    pub fn release(mut self) -> Result<Running> {
        let release = self
            .release
            .take()
            .context("the command was released twice")?;
        // SAFETY: writes one byte from a valid buffer to a descriptor we own.
        let n = unsafe { libc::write(release.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        if n != 1 {
            return Err(std::io::Error::last_os_error()).context("starting the command");
        }
        drop(release);
        let mut errno = 0i32;
        // SAFETY: reads at most 4 bytes into a valid i32; blocks until the
        // exec succeeded (EOF, close-on-exec) or failed (the errno).
        let n = unsafe {
            libc::read(
                self.exec_error.as_raw_fd(),
                (&mut errno as *mut i32).cast(),
                std::mem::size_of::<i32>(),
            )
        };
        let running = Running::new(self.pid);
        if n == std::mem::size_of::<i32>() as isize {
            drop(running);
            let err = std::io::Error::from_raw_os_error(errno);
            bail!("cannot run {}: {err}", self.program);
        }
        Ok(running)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        // Never released: closing the release pipe makes the child exit
        // without running the command; reap it.
        if let Some(release) = self.release.take() {
            drop(release);
            reap(self.pid, Some(Duration::from_secs(1)));
        }
    }
}

/// Waits for `pid` to end, SIGKILLing it after `grace` if given; returns
/// its wait status.
fn reap(pid: libc::pid_t, grace: Option<Duration>) -> Option<i32> {
    let deadline = grace.map(|g| Instant::now() + g);
    let mut status = 0;
    loop {
        // SAFETY: status is a valid out-parameter.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if rc == pid {
            return Some(status);
        }
        if rc < 0 {
            return None;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            // SAFETY: kill with our own child's pid.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            // SAFETY: as above; blocking wait after SIGKILL.
            let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
            return (rc == pid).then_some(status);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A started command.
pub struct Running {
    pid: libc::pid_t,
    pidfd: Option<OwnedFd>,
    status: Cell<Option<i32>>,
}

impl Running {
    fn new(pid: libc::pid_t) -> Running {
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let pidfd = (fd >= 0).then(|| {
            // SAFETY: a fresh descriptor we now own.
            unsafe { OwnedFd::from_raw_fd(fd as RawFd) }
        });
        Running {
            pid,
            pidfd,
            status: Cell::new(None),
        }
    }

    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// A descriptor that polls readable when the command exits (-1 if the
    /// kernel has no pidfds: the loop's timeout then finds the exit).
    pub fn pidfd(&self) -> RawFd {
        self.pidfd.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    /// True once the command has exited (it is reaped then).
    pub fn exited(&self) -> bool {
        if self.status.get().is_some() {
            return true;
        }
        let mut status = 0;
        // SAFETY: status is a valid out-parameter; WNOHANG never blocks.
        let rc = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
        if rc == self.pid {
            self.status.set(Some(status));
        }
        rc == self.pid || rc < 0
    }

    /// Ends the command if it still runs (the stop signal the tool got, or
    /// SIGTERM; SIGKILL after a second), reaps it, and returns the tool's
    /// exit status: the command's own, or 128 + the signal that ended it.
    pub fn finish(self) -> u8 {
        let status = match self.status.get() {
            Some(s) => Some(s),
            None => {
                let sig = crate::signals::received().unwrap_or(libc::SIGTERM);
                // SAFETY: kill with our own, not yet reaped, child's pid.
                unsafe { libc::kill(self.pid, sig) };
                reap(self.pid, Some(Duration::from_secs(1)))
            }
        };
        self.status.set(Some(0));
        match status {
            Some(s) if libc::WIFEXITED(s) => libc::WEXITSTATUS(s) as u8,
            Some(s) if libc::WIFSIGNALED(s) => 128u8.saturating_add(libc::WTERMSIG(s) as u8),
            _ => 1,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.status.get().is_none() && !self.exited() {
            // SAFETY: kill with our own, not yet reaped, child's pid.
            unsafe { libc::kill(self.pid, libc::SIGTERM) };
            reap(self.pid, Some(Duration::from_secs(1)));
        }
    }
}
