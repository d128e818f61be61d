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

/// Signal names without `SIG`, by number: the numbers from libc for the
/// target (they differ between architectures), so a name is never shown
/// for another signal's number.
const NAMES: [(libc::c_int, &str); 31] = [
    (libc::SIGHUP, "HUP"),
    (libc::SIGINT, "INT"),
    (libc::SIGQUIT, "QUIT"),
    (libc::SIGILL, "ILL"),
    (libc::SIGTRAP, "TRAP"),
    (libc::SIGABRT, "ABRT"),
    (libc::SIGBUS, "BUS"),
    (libc::SIGFPE, "FPE"),
    (libc::SIGKILL, "KILL"),
    (libc::SIGUSR1, "USR1"),
    (libc::SIGSEGV, "SEGV"),
    (libc::SIGUSR2, "USR2"),
    (libc::SIGPIPE, "PIPE"),
    (libc::SIGALRM, "ALRM"),
    (libc::SIGTERM, "TERM"),
    (libc::SIGSTKFLT, "STKFLT"),
    (libc::SIGCHLD, "CHLD"),
    (libc::SIGCONT, "CONT"),
    (libc::SIGSTOP, "STOP"),
    (libc::SIGTSTP, "TSTP"),
    (libc::SIGTTIN, "TTIN"),
    (libc::SIGTTOU, "TTOU"),
    (libc::SIGURG, "URG"),
    (libc::SIGXCPU, "XCPU"),
    (libc::SIGXFSZ, "XFSZ"),
    (libc::SIGVTALRM, "VTALRM"),
    (libc::SIGPROF, "PROF"),
    (libc::SIGWINCH, "WINCH"),
    (libc::SIGIO, "IO"),
    (libc::SIGPWR, "PWR"),
    (libc::SIGSYS, "SYS"),
];

/// The kernel's real-time signals (glibc reserves the first two of them,
/// so its SIGRTMIN is higher; the kernel numbers from here), to _NSIG.
const KERNEL_SIGRTMIN: libc::c_int = 32;
const KERNEL_SIGRTMAX: libc::c_int = 64;

/// A signal's name without `SIG` (`KILL`; `RTMIN+3` for a real-time one);
/// None for a number that names no signal.
pub fn name(sig: libc::c_int) -> Option<std::borrow::Cow<'static, str>> {
    if let Some((_, n)) = NAMES.iter().find(|(s, _)| *s == sig) {
        return Some((*n).into());
    }
    (KERNEL_SIGRTMIN..=KERNEL_SIGRTMAX)
        .contains(&sig)
        .then(|| match sig - KERNEL_SIGRTMIN {
            0 => "RTMIN".into(),
            n => format!("RTMIN+{n}").into(),
        })
}

/// A signal by name (`KILL`, `SIGKILL`, `kill`, `RTMIN+3`) or number, for
/// an option's value parser.
pub fn parse(text: &str) -> Result<libc::c_int, String> {
    if let Ok(n) = text.parse::<libc::c_int>() {
        return name(n)
            .map(|_| n)
            .ok_or_else(|| format!("{n} is not a signal number"));
    }
    let upper = text.to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    if let Some((s, _)) = NAMES.iter().find(|(_, n)| *n == bare) {
        return Ok(*s);
    }
    let rt = bare
        .strip_prefix("RTMIN")
        .and_then(|r| match r {
            "" => Some(0),
            _ => r.strip_prefix('+')?.parse::<libc::c_int>().ok(),
        })
        .map(|n| KERNEL_SIGRTMIN + n);
    rt.filter(|s| name(*s).is_some())
        .ok_or_else(|| format!("no signal is named {text:?} (KILL, SIGTERM, 9, RTMIN+1…)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_agree_both_ways() {
        assert_eq!(name(libc::SIGKILL).as_deref(), Some("KILL"));
        assert_eq!(name(34).as_deref(), Some("RTMIN+2"));
        assert_eq!(name(0), None);
        assert_eq!(name(200), None);
        for text in ["USR1", "sigusr1", "SIGUSR1", "10"] {
            assert_eq!(parse(text), Ok(libc::SIGUSR1), "{text}");
        }
        assert_eq!(parse("RTMIN+2"), Ok(34));
        assert!(parse("NOPE").unwrap_err().contains("NOPE"));
        assert!(parse("0").is_err() && parse("99").is_err());
        for sig in 1..=64 {
            if let Some(n) = name(sig) {
                assert_eq!(parse(&n), Ok(sig), "{n}");
            }
        }
    }
}
