//! How an open is printed: the columns, and -F's path.

use std::borrow::Cow;

use common::kinds::event::{columns, Cell, Column, Table};
use common::output::{c_bytes_n, walked_path};

use crate::skel::types;
use crate::{Args, Opensnoop};

/// The columns, as BCC's: those the options ask for, every JSON key.
pub fn table(args: &Args) -> Table<Opensnoop> {
    Table::<Opensnoop>::new(args.common.json)
        .column(args.timestamp, columns::time())
        .column(false, columns::ts())
        .column(
            args.print_uid,
            Column::new("UID", 7, "uid", |t| t.event.uid.into()),
        )
        .columns([
            columns::pid(7),
            columns::tid(0).json_only(),
            columns::cgroup_id(),
            columns::comm("COMM", 16),
            Column::right("FD", 3, "fd", |t| fd_err(&t.event).0.into()),
            Column::right("ERR", 3, "err", |t| fd_err(&t.event).1.into()),
        ])
        .column(
            args.extended_fields,
            Column::new("FLAGS", 8, "", |t| {
                Cell::Octal(t.event.flags as u32 as u64, 8)
            }),
        )
        .column(false, Column::json("flags", |t| t.event.flags.into()))
        .column(
            args.extended_fields,
            Column::new("MODE", 4, "mode", |t| Cell::Octal(t.event.mode.into(), 4)),
        )
        .columns([Column::new("PATH", 0, "path", |t| {
            Cell::Bytes(path(&t.event, t.args.full_path))
        })])
}

/// The descriptor opened, or -1 and the error number.
fn fd_err(e: &types::event) -> (i32, i32) {
    if e.ret >= 0 {
        (e.ret, 0)
    } else {
        (-1, -e.ret)
    }
}

/// The path as opened, or with -F (`full`) the absolute path: the
/// directory names the kernel side collected, base first, joined in front.
pub fn path(e: &types::event, full: bool) -> Cow<'_, [u8]> {
    let size = (e.size as usize).min(e.buf.len());
    let name = c_bytes_n(&e.buf[..size])
        .split(|&b| b == 0)
        .next()
        .unwrap_or_default();
    if !full || name.starts_with(b"/") {
        // The common case borrows: no allocation per event.
        return Cow::Borrowed(name);
    }
    let dirs = c_bytes_n(&e.buf[..size])
        .get(name.len() + 1..)
        .unwrap_or_default();
    let mut full = walked_path(dirs, e.dir_depth as usize, e.dir_truncated != 0);
    if name != b"." {
        if full.ends_with(b"/") {
            full.pop();
        }
        full.push(b'/');
        full.extend_from_slice(name.strip_prefix(b"./").unwrap_or(name));
    }
    Cow::Owned(full)
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
