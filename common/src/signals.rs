//! SIGINT, SIGTERM and SIGHUP end a tool: the handler sets a flag and
//! writes a byte to a pipe that the event loop polls, so a stop wakes the
//! loop at once instead of at its next timeout.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static WAKE_WRITE: AtomicI32 = AtomicI32::new(-1);
static WAKE_READ: AtomicI32 = AtomicI32::new(-1);

/// The signals that end a tool with its final output.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_stop_signal(sig: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
    SIGNAL.store(sig, Ordering::Relaxed);
    let fd = WAKE_WRITE.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: write(2) is async-signal-safe; the pipe is non-blocking,
        // so a full pipe (the loop is already awake) drops the byte.
        unsafe { libc::write(fd, b"s".as_ptr().cast(), 1) };
    }
}

/// Installs the handlers and the wake-up pipe; call once, first thing.
pub fn install() {
    let mut fds = [-1; 2];
    // SAFETY: fds is a valid array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } == 0 {
        WAKE_READ.store(fds[0], Ordering::Relaxed);
        WAKE_WRITE.store(fds[1], Ordering::Relaxed);
    }
    for sig in STOP_SIGNALS {
        // SAFETY: the handler only stores to atomics and calls write(2),
        // both async-signal-safe. No SA_RESTART: a blocking call returns
        // EINTR and its caller sees the flag.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_stop_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
}

/// True once a stop signal has arrived: the tool should print what it has
/// and exit.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// The stop signal that arrived, if any (to forward to a started command).
pub fn received() -> Option<libc::c_int> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        sig => Some(sig),
    }
}

/// The read end of the wake-up pipe, for poll(2); -1 if it could not be made.
pub fn wake_fd() -> RawFd {
    WAKE_READ.load(Ordering::Relaxed)
}

/// Empties the wake-up pipe after a wake-up.
pub fn drain_wake() {
    let fd = wake_fd();
    if fd < 0 {
        return;
    }
    let mut buf = [0u8; 64];
    // SAFETY: reads into a valid buffer from a non-blocking pipe we own.
    while unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
}
