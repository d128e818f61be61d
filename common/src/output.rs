//! Text and JSON output: escaping of what comes from the traced system,
//! time columns, and a buffered stdout that notices when its reader is gone.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

/// Renders bytes from the traced system (arguments, paths, comm) as one
/// printable line: control characters and bytes that are not UTF-8 become
/// escapes (`\n`, `\t`, `\r`, `\xNN`), so no output line can be forged or
/// split by what a traced program passes.
pub fn escape(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !s.chars().any(char::is_control) {
            return Cow::Borrowed(s);
        }
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                }
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    Cow::Owned(out)
}

/// A C `char` array (i8 in generated types) as bytes, all of them.
pub fn c_bytes_n(field: &[i8]) -> &[u8] {
    // SAFETY: i8 and u8 have the same size and alignment, and every bit
    // pattern is valid for both.
    unsafe { std::slice::from_raw_parts(field.as_ptr().cast(), field.len()) }
}

/// The bytes of a fixed-size C string field, up to its first NUL.
pub fn c_bytes(field: &[i8]) -> &[u8] {
    let bytes = c_bytes_n(field);
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// A fixed-size C string field as escaped text.
pub fn c_str(field: &[i8]) -> Cow<'_, str> {
    escape(c_bytes(field))
}

/// A C string field as a JSON string: lossless where it is UTF-8.
pub fn c_string(field: &[i8]) -> String {
    String::from_utf8_lossy(c_bytes(field)).into_owned()
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-parameter; the clocks used always exist.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Converts the kernel's timestamps (bpf_ktime_get_ns, CLOCK_MONOTONIC) into
/// seconds since the tool started and wall-clock times.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start_mono_ns: u64,
    start_real_ns: u64,
}

impl Clock {
    pub fn start() -> Self {
        Clock {
            start_mono_ns: clock_ns(libc::CLOCK_MONOTONIC),
            start_real_ns: clock_ns(libc::CLOCK_REALTIME),
        }
    }

    /// Seconds from the start of tracing to a kernel timestamp.
    pub fn elapsed(&self, ktime_ns: u64) -> f64 {
        ktime_ns.saturating_sub(self.start_mono_ns) as f64 / 1e9
    }

    /// The wall-clock time of a kernel timestamp, in seconds since the epoch.
    pub fn wall_secs(&self, ktime_ns: u64) -> i64 {
        let real = self.start_real_ns as i128 + ktime_ns as i128 - self.start_mono_ns as i128;
        (real / 1_000_000_000) as i64
    }

    /// `HH:MM:SS` in local time for a kernel timestamp.
    pub fn hms(&self, ktime_ns: u64) -> String {
        hms(self.wall_secs(ktime_ns))
    }
}

/// `HH:MM:SS` in local time for seconds since the epoch.
pub fn hms(epoch_secs: i64) -> String {
    // SAFETY: an all-zero tm is a valid out-parameter.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let t: libc::time_t = epoch_secs as _;
    // SAFETY: both pointers are valid; localtime_r is thread-safe.
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    if !ok {
        return "??:??:??".into();
    }
    format!("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec)
}

/// The current wall-clock time as `HH:MM:SS`.
pub fn now_hms() -> String {
    hms((clock_ns(libc::CLOCK_REALTIME) / 1_000_000_000) as i64)
}

/// Buffered stdout. Tools write through it and the event loop flushes it
/// after each batch, so output reaches a pipe or file promptly without a
/// write(2) per line.
pub struct Out {
    w: BufWriter<io::Stdout>,
}

impl Default for Out {
    fn default() -> Self {
        Out {
            w: BufWriter::with_capacity(64 * 1024, io::stdout()),
        }
    }
}

impl Out {
    /// Writes one JSON object as a line.
    pub fn json(&mut self, value: &serde_json::Value) -> io::Result<()> {
        serde_json::to_writer(&mut self.w, value)?;
        self.w.write_all(b"\n")
    }

    /// Says the tool is attached: `line` on stdout, or on stderr when
    /// stdout is input to another program (`--json`, folded stacks).
    /// Flushed, so a script can wait for it.
    pub fn banner(&mut self, to_stderr: bool, line: &str) -> io::Result<()> {
        if to_stderr {
            eprintln!("{line}");
            return Ok(());
        }
        writeln!(self.w, "{line}")?;
        self.w.flush()
    }

    /// True when stdout is a pipe whose reader has gone (`tool | head`): the
    /// tool should end now rather than at its next write.
    pub fn reader_gone(&self) -> bool {
        let mut pfd = libc::pollfd {
            fd: libc::STDOUT_FILENO,
            events: 0,
            revents: 0,
        };
        // SAFETY: one valid pollfd, zero timeout.
        let n = unsafe { libc::poll(&mut pfd, 1, 0) };
        n > 0 && pfd.revents & (libc::POLLERR | libc::POLLHUP) != 0
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.w.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.w.write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_passes_through_unchanged() {
        assert!(matches!(
            escape(b"ls -la /tmp"),
            Cow::Borrowed("ls -la /tmp")
        ));
        assert_eq!(escape("caf\u{e9}".as_bytes()), "caf\u{e9}");
    }

    #[test]
    fn control_characters_and_bad_utf8_are_escaped() {
        assert_eq!(escape(b"a\nb"), "a\\nb");
        assert_eq!(escape(b"tab\there\r"), "tab\\there\\r");
        assert_eq!(escape(b"\x1b[31mred"), "\\x1b[31mred");
        assert_eq!(escape(b"del\x7f"), "del\\x7f");
        assert_eq!(escape(b"bad\xff\xfeutf8"), "bad\\xff\\xfeutf8");
        // C1 control characters are control characters too.
        assert_eq!(escape("x\u{85}y".as_bytes()), "x\\xc2\\x85y");
    }

    #[test]
    fn c_strings_stop_at_the_first_nul() {
        let field: Vec<i8> = b"bash\0junk".iter().map(|&b| b as i8).collect();
        assert_eq!(c_bytes(&field), b"bash");
        let full: Vec<i8> = b"no-nul".iter().map(|&b| b as i8).collect();
        assert_eq!(c_str(&full), "no-nul");
    }

    #[test]
    fn clock_maps_kernel_time_to_elapsed_seconds() {
        let clock = Clock {
            start_mono_ns: 5_000_000_000,
            start_real_ns: 1_700_000_000_000_000_000,
        };
        assert_eq!(clock.elapsed(6_500_000_000), 1.5);
        assert_eq!(clock.elapsed(1), 0.0);
        assert_eq!(clock.wall_secs(7_000_000_000), 1_700_000_002);
    }

    #[test]
    fn hms_is_eight_characters() {
        let s = hms(1_700_000_000);
        assert_eq!(s.len(), 8);
        assert_eq!(&s[2..3], ":");
        assert_eq!(&s[5..6], ":");
    }
}
