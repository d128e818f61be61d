//! How an open is printed: the table row or JSON object, and -F's path.

use std::borrow::Cow;
use std::io::{self, Write};

use common::output::{c_bytes, c_bytes_n, c_str, c_string, escape, Clock, Out};
use serde_json::json;

use crate::skel::types;
use crate::Args;

pub fn header(args: &Args) -> String {
    let mut h = String::new();
    if args.timestamp {
        h += &format!("{:<8} ", "TIME");
    }
    if args.print_uid {
        h += &format!("{:<7} ", "UID");
    }
    h += &format!("{:<7} {:<16} {:>3} {:>3} ", "PID", "COMM", "FD", "ERR");
    if args.extended_fields {
        h += &format!("{:<8} {:<4} ", "FLAGS", "MODE");
    }
    h + "PATH"
}

/// The path as opened, or with -F (`full`) the absolute path: the
/// directory names the kernel side collected, base first, joined in front.
pub fn path(e: &types::event, full: bool) -> Cow<'_, [u8]> {
    let size = (e.size as usize).min(e.buf.len());
    let mut parts = c_bytes_n(&e.buf[..size]).split(|&b| b == 0);
    let name = parts.next().unwrap_or_default();
    if !full || name.starts_with(b"/") {
        // The common case borrows: no allocation per event.
        return Cow::Borrowed(name);
    }
    let mut full = Vec::with_capacity(size + 8);
    if e.dir_truncated != 0 {
        full.extend_from_slice(b"...");
    }
    let dirs: Vec<&[u8]> = parts.take(e.dir_depth as usize).collect();
    for dir in dirs.iter().rev() {
        full.push(b'/');
        full.extend_from_slice(dir);
    }
    if name != b"." {
        full.push(b'/');
        full.extend_from_slice(name.strip_prefix(b"./").unwrap_or(name));
    }
    Cow::Owned(full)
}

pub fn print_event(out: &mut Out, args: &Args, clock: &Clock, e: &types::event) -> io::Result<()> {
    if let Some(name) = &args.name {
        let comm = c_bytes(&e.comm);
        if !comm.windows(name.len()).any(|w| w == name.as_bytes()) {
            return Ok(());
        }
    }
    let (fd, err) = if e.ret >= 0 { (e.ret, 0) } else { (-1, -e.ret) };
    let path = path(e, args.full_path);
    if args.common.json {
        return out.json(&json!({
            "time": clock.hms(e.ts_ns),
            "ts": clock.elapsed(e.ts_ns),
            "uid": e.uid,
            "pid": e.pid,
            "tid": e.tid,
            "comm": c_string(&e.comm),
            "fd": fd,
            "err": err,
            "flags": e.flags,
            "mode": e.mode,
            "path": String::from_utf8_lossy(&path),
        }));
    }
    if args.timestamp {
        write!(out, "{:<8} ", clock.hms(e.ts_ns))?;
    }
    if args.print_uid {
        write!(out, "{:<7} ", e.uid)?;
    }
    write!(
        out,
        "{:<7} {:<16} {:>3} {:>3} ",
        e.pid,
        c_str(&e.comm),
        fd,
        err
    )?;
    if args.extended_fields {
        write!(out, "{:08o} {:04o} ", e.flags, e.mode)?;
    }
    writeln!(out, "{}", escape(&path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(buf: &[u8], depth: u16, truncated: bool) -> types::event {
        let mut e = types::event::default();
        for (i, b) in buf.iter().enumerate() {
            e.buf[i] = *b as i8;
        }
        e.size = buf.len() as u32;
        e.dir_depth = depth;
        e.dir_truncated = truncated as u8;
        e
    }

    #[test]
    fn paths_are_joined_base_directory_first() {
        assert_eq!(
            path(&event(b"/etc/passwd\0", 0, false), true).to_vec(),
            b"/etc/passwd"
        );
        assert_eq!(
            path(&event(b"rel/file\0", 0, false), false).to_vec(),
            b"rel/file"
        );
        assert_eq!(
            path(&event(b"rel/file\0", 0, false), true).to_vec(),
            b"/rel/file"
        );
        assert_eq!(
            path(&event(b"file\0x\0tmp\0", 2, false), true).to_vec(),
            b"/tmp/x/file"
        );
        assert_eq!(
            path(&event(b"./file\0tmp\0", 1, false), true).to_vec(),
            b"/tmp/file"
        );
        assert_eq!(path(&event(b".\0tmp\0", 1, false), true).to_vec(), b"/tmp");
        assert_eq!(
            path(&event(b"f\0deep\0", 1, true), true).to_vec(),
            b".../deep/f"
        );
    }
}
