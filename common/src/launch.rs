//! A command to trace (opensnoop --exec, memleak -c): a child forked before
//! the probes load and held before its exec until they are attached, so
//! its pid can be filtered on and nothing it does is missed.

use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

pub struct Held {
    pid: libc::pid_t,
    release: OwnedFd,
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

impl Held {
    pub fn spawn(argv: &[OsString]) -> Result<Held> {
        let program = CString::new(resolve(&argv[0])?.as_os_str().as_bytes())?;
        let args: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .context("an argument of the command contains a NUL byte")?;
        let mut ptrs: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());

        let mut fds = [0; 2];
        // SAFETY: fds is a valid array of two ints.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error()).context("starting the command: pipe");
        }
        // SAFETY: pipe2 returned two fresh descriptors that we now own.
        let (wait_end, release) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: the tool is single-threaded here; the child calls only
        // async-signal-safe functions (close, dup2, read, execv, _exit) on memory
        // prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(std::io::Error::last_os_error()).context("starting the command: fork");
        }
        if pid == 0 {
            // SAFETY: see above; the child never returns from this block.
            unsafe {
                libc::close(release.as_raw_fd());
                let mut byte = 0u8;
                // Its output goes to our stderr: our stdout is the trace.
                libc::dup2(libc::STDERR_FILENO, libc::STDOUT_FILENO);
                if libc::read(wait_end.as_raw_fd(), (&mut byte as *mut u8).cast(), 1) == 1 {
                    libc::execv(program.as_ptr(), ptrs.as_ptr());
                }
                libc::_exit(127);
            }
        }
        drop(wait_end);
        Ok(Held { pid, release })
    }

    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Lets the child exec. Dropping a Held without this ends the child
    /// before it runs anything (it reads EOF and exits 127).
    pub fn release(self) -> Result<()> {
        // SAFETY: writes one byte from a valid buffer to a descriptor we own.
        let n = unsafe { libc::write(self.release.as_raw_fd(), b"x".as_ptr().cast(), 1) };
        if n != 1 {
            return Err(std::io::Error::last_os_error()).context("starting the command");
        }
        Ok(())
    }
}
