//! Text and JSON output: escaping of what comes from the traced system,
//! time columns, and a buffered stdout that gives up on a stalled reader
//! once the tool is stopping.

pub mod file;
pub mod hist;
pub mod manpage;
pub mod net;
pub mod users;

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};

/// Renders bytes from the traced system (arguments, paths, comm) as one
/// printable line: control characters and bytes that are not UTF-8 become
/// escapes (`\n`, `\t`, `\r`, `\xNN`), so no output line can be forged or
/// split by what a traced program passes.
pub fn escape(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !s.chars().any(needs_escape) {
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
                c if is_bidi_control(c) => {
                    let _ = write!(out, "\\u{{{:x}}}", c as u32);
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

/// Unicode's bidirectional formatting characters: printed raw, they can
/// reorder what a terminal shows (CVE-2021-42574, "Trojan Source").
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn needs_escape(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// A C `char` array (i8 in generated types) as bytes, all of them.
pub fn c_bytes_n(field: &[i8]) -> &[u8] {
    // SAFETY: i8 and u8 have the same size and alignment, and every bit
    // pattern is valid for both.
    unsafe { std::slice::from_raw_parts(field.as_ptr().cast(), field.len()) }
}

/// A path the kernel side walked (bpf/include/paths.bpf.h) as an absolute
/// path: `names` holds `depth` NUL-terminated names, the file's (or the
/// innermost directory's) first and the root's child last; `...` leads
/// where the walk stopped short of the root.
pub fn walked_path(names: &[u8], depth: usize, truncated: bool) -> Vec<u8> {
    let mut path = Vec::with_capacity(names.len() + 4);
    if truncated {
        path.extend_from_slice(b"...");
    }
    let names: Vec<&[u8]> = names.split(|&b| b == 0).take(depth).collect();
    for name in names.iter().rev() {
        path.push(b'/');
        path.extend_from_slice(name);
    }
    if path.is_empty() {
        path.push(b'/');
    }
    path
}

/// The bytes of a fixed-size C string field, up to its first NUL.
pub fn c_bytes(field: &[i8]) -> &[u8] {
    let bytes = c_bytes_n(field);
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// Whether a task's name (a fixed-size C string field) holds `name`: the
/// event tools' `-n` (BCC's: a substring, not a pattern); true without one.
pub fn comm_holds(comm: &[i8], name: Option<&str>) -> bool {
    name.is_none_or(|n| c_bytes(comm).windows(n.len()).any(|w| w == n.as_bytes()))
}

/// A fixed-size C string field as escaped text.
pub fn c_str(field: &[i8]) -> Cow<'_, str> {
    escape(c_bytes(field))
}

/// A C string field as a JSON string: lossless where it is UTF-8.
pub fn c_string(field: &[i8]) -> String {
    String::from_utf8_lossy(c_bytes(field)).into_owned()
}

/// Clock `clock` now, in ns.
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-parameter; the clocks used always exist.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in nanoseconds: bpf_ktime_get_ns()'s clock.
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
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

    /// `HH:MM:SS.mmm` for a kernel timestamp, in local time or UTC.
    pub fn hms_millis(&self, ktime_ns: u64, utc: bool) -> String {
        let real = self.start_real_ns as i128 + ktime_ns as i128 - self.start_mono_ns as i128;
        let (secs, millis) = (
            real.div_euclid(1_000_000_000),
            real.rem_euclid(1_000_000_000) / 1_000_000,
        );
        match broken_down(secs as i64, utc) {
            Some(tm) => format!(
                "{:02}:{:02}:{:02}.{millis:03}",
                tm.tm_hour, tm.tm_min, tm.tm_sec
            ),
            None => "??:??:??.???".into(),
        }
    }
}

/// Seconds since the epoch broken down in local time, or UTC.
fn broken_down(epoch_secs: i64, utc: bool) -> Option<libc::tm> {
    // SAFETY: an all-zero tm is a valid out-parameter.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let t: libc::time_t = epoch_secs as _;
    // SAFETY: both pointers are valid; localtime_r and gmtime_r are
    // thread-safe.
    let ok = unsafe {
        if utc {
            !libc::gmtime_r(&t, &mut tm).is_null()
        } else {
            !libc::localtime_r(&t, &mut tm).is_null()
        }
    };
    ok.then_some(tm)
}

/// `HH:MM:SS` in local time for seconds since the epoch.
pub fn hms(epoch_secs: i64) -> String {
    match broken_down(epoch_secs, false) {
        Some(tm) => format!("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec),
        None => "??:??:??".into(),
    }
}

/// The local time zone's abbreviation now (`UTC`, `CET`), as strftime's
/// `%Z`: BCC's `TIME-CET` headers.
pub fn zone_name() -> String {
    let now = (clock_ns(libc::CLOCK_REALTIME) / 1_000_000_000) as i64;
    broken_down(now, false)
        .filter(|tm| !tm.tm_zone.is_null())
        .map(|tm| {
            // SAFETY: glibc's tm_zone points at a NUL-terminated name that
            // lives as long as the time zone data.
            let zone = unsafe { std::ffi::CStr::from_ptr(tm.tm_zone) };
            zone.to_string_lossy().into_owned()
        })
        .unwrap_or_else(|| "UTC".into())
}

/// The current local date as `MM/DD/YY` and time as `HH:MM:SS`
/// (strftime's `%x` and `%X` in the C locale: BCC's tcpsubnet).
pub fn now_date_and_hms() -> (String, String) {
    let now = (clock_ns(libc::CLOCK_REALTIME) / 1_000_000_000) as i64;
    let date = broken_down(now, false).map_or_else(
        || "??/??/??".into(),
        |tm| {
            format!(
                "{:02}/{:02}/{:02}",
                tm.tm_mon + 1,
                tm.tm_mday,
                tm.tm_year % 100
            )
        },
    );
    (date, hms(now))
}

/// The current wall-clock time as `HH:MM:SS`.
pub fn now_hms() -> String {
    hms((clock_ns(libc::CLOCK_REALTIME) / 1_000_000_000) as i64)
}

/// serde_json's compact output, with every control character (C0, DEL,
/// C1) and bidirectional formatting character escaped as `\uXXXX`: JSON
/// allows them raw, but a terminal or a log viewer acts on them.
struct SafeJson;

impl serde_json::ser::Formatter for SafeJson {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if needs_escape(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                write!(writer, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// Writes `value` as one line's JSON (no newline), control characters
/// escaped ([`SafeJson`]).
pub fn json_to_writer<W: Write, T: serde::Serialize + ?Sized>(
    writer: W,
    value: &T,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(writer, SafeJson);
    value.serialize(&mut ser).map_err(io::Error::from)
}

/// Prints a note on stderr as `tool: message`. A closed or full stderr is
/// no reason to stop tracing, so failures to write are ignored.
pub fn note(message: std::fmt::Arguments) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "{}: {message}", tool_name());
}

/// `note!("...", args)`: [`note`] with format arguments.
#[macro_export]
macro_rules! note {
    ($($arg:tt)*) => { $crate::output::note(format_args!($($arg)*)) };
}

/// How long a write may wait for a reader that takes nothing, once a stop
/// signal came: a reader that is reading, however slowly, gets the rest.
const STOP_WRITE_BUDGET: std::time::Duration = std::time::Duration::from_millis(200);

/// Standard output written with write(2) directly: a write blocked on a
/// stalled reader gives up once a stop signal has come (SIGINT interrupts
/// it), so a tool piped into a reader that does not read still ends.
struct Stdout {
    /// Since when a write after a stop has been waiting with no progress:
    /// it gives up after [`STOP_WRITE_BUDGET`].
    stopping_since: Option<std::time::Instant>,
    /// Standard output, or standard error when an output-file option took
    /// standard output (`--svg -`).
    fd: libc::c_int,
}

impl Stdout {
    fn new() -> Stdout {
        Stdout {
            stopping_since: None,
            fd: if file::stdout_taken() {
                libc::STDERR_FILENO
            } else {
                libc::STDOUT_FILENO
            },
        }
    }
}

/// The error of a write abandoned because the tool is stopping.
fn abandoned() -> io::Error {
    io::Error::other("output abandoned: stdout was not being read")
}

impl Stdout {
    /// After a stop: waits until stdout takes more, within the budget.
    fn wait_writable(&mut self) -> io::Result<()> {
        let since = *self
            .stopping_since
            .get_or_insert_with(std::time::Instant::now);
        let left = STOP_WRITE_BUDGET.saturating_sub(since.elapsed());
        let mut pfd = libc::pollfd {
            fd: self.fd,
            events: libc::POLLOUT,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, left.as_millis() as libc::c_int) };
        if n > 0 {
            Ok(())
        } else {
            Err(abandoned())
        }
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            let mut len = buf.len();
            let stopping = crate::signals::stop_requested();
            if stopping {
                self.wait_writable()?;
                // A pipe with room takes PIPE_BUF bytes at once and whole:
                // whole lines, where they fit, so that giving up later
                // leaves no line cut in the pipe.
                len = len.min(4096);
                if let Some(end) = buf[..len].iter().rposition(|&b| b == b'\n') {
                    len = end + 1;
                }
            }
            // SAFETY: writes from a valid buffer of at least `len` bytes.
            let n = unsafe { libc::write(self.fd, buf.as_ptr().cast(), len) };
            if n >= 0 {
                if stopping && n > 0 {
                    // Progress: the reader is reading.
                    self.stopping_since = None;
                }
                return Ok(n as usize);
            }
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Buffered stdout. Tools write through it and the event loop flushes it
/// after each batch, so output reaches a pipe or file promptly without a
/// write(2) per line. Once a stop signal has come and stdout does not take
/// more, further output is dropped and counted ([`Out::dropped_lines`]).
pub struct Out {
    w: BufWriter<Stdout>,
    /// Lines dropped after stdout was abandoned; None while writing.
    dropped: Option<u64>,
}

impl Default for Out {
    fn default() -> Self {
        Out {
            w: BufWriter::with_capacity(64 * 1024, Stdout::new()),
            dropped: None,
        }
    }
}

impl Out {
    /// Writes one JSON object as a line.
    pub fn json(&mut self, value: &serde_json::Value) -> io::Result<()> {
        // Straight into the buffer (through write_all, which knows a stop).
        json_to_writer(&mut *self, value)?;
        self.write_all(b"\n")
    }

    /// Says the tool is attached: `line` on stdout, or on stderr when
    /// stdout is input to another program (`--json`, folded stacks).
    /// Flushed, so a script can wait for it.
    pub fn banner(&mut self, to_stderr: bool, line: &str) -> io::Result<()> {
        if to_stderr {
            let _ = writeln!(io::stderr().lock(), "{line}");
            return Ok(());
        }
        writeln!(self, "{line}")?;
        self.flush()
    }

    /// Lines dropped because stdout stopped taking output after a stop
    /// signal; 0 when none were.
    pub fn dropped_lines(&self) -> u64 {
        self.dropped.unwrap_or(0)
    }

    /// Switches to dropping (and counting) output, counting what the
    /// buffer held.
    fn abandon(&mut self) {
        let old = std::mem::replace(&mut self.w, BufWriter::with_capacity(0, Stdout::new()));
        let (_, pending) = old.into_parts();
        let pending = pending.unwrap_or_default();
        let lines = pending.iter().filter(|&&b| b == b'\n').count() as u64;
        self.dropped = Some(self.dropped.unwrap_or(0) + lines);
    }

    fn check(&mut self, r: io::Result<()>) -> io::Result<()> {
        match r {
            Err(e) if crate::signals::stop_requested() && e.kind() == io::ErrorKind::Other => {
                self.abandon();
                Ok(())
            }
            r => r,
        }
    }
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if let Some(n) = &mut self.dropped {
            *n += buf.iter().filter(|&&b| b == b'\n').count() as u64;
            return Ok(());
        }
        let r = self.w.write_all(buf);
        self.check(r)
    }
    fn flush(&mut self) -> io::Result<()> {
        if self.dropped.is_some() {
            return Ok(());
        }
        let r = self.w.flush();
        self.check(r)
    }
}

/// The tool's name, as the user invoked it.
pub fn tool_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "tool".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_holds_a_substring_up_to_the_nul() {
        let mut comm = [0i8; 16];
        for (c, b) in comm.iter_mut().zip(b"postgres\0main") {
            *c = *b as i8;
        }
        assert!(comm_holds(&comm, None));
        assert!(comm_holds(&comm, Some("gres")));
        assert!(!comm_holds(&comm, Some("main")));
        assert!(!comm_holds(&comm, Some("postgresql")));
    }

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
        // Bidirectional overrides would reorder the terminal's line.
        assert_eq!(escape("a\u{202e}b".as_bytes()), "a\\u{202e}b");
        assert_eq!(escape("\u{2066}x".as_bytes()), "\\u{2066}x");
    }

    #[test]
    fn json_escapes_every_control_and_bidi_character() {
        let mut out = Vec::new();
        let name = "a\u{202e}b\u{200f}c\u{9b}d\u{7f}e\u{1b}f\u{2066}g\u{e9}";
        json_to_writer(&mut out, &serde_json::json!({ "comm": name })).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "{\"comm\":\"a\\u202eb\\u200fc\\u009bd\\u007fe\\u001bf\\u2066g\u{e9}\"}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["comm"], name);
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
