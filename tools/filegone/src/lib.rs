//! filegone: each file deleted (unlink, unlinkat, rmdir) or renamed
//! (rename, renameat, renameat2), with the process and the paths: who
//! removed or replaced a file, and from where.

mod info;

use std::borrow::Cow;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::{c_bytes_n, walked_path};
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("filegone");
use skel::{types, FilegoneSkel, FilegoneSkelBuilder, OpenFilegoneSkel};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    filegone              # trace every file deleted or renamed
    filegone -p 181       # only what process 181 does
    filegone -d 60        # trace for a minute
    filegone --json | jq .";

/// Trace files deleted or renamed: the process, and the paths.
#[derive(Parser, Debug)]
#[command(name = "filegone", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Trace for this many seconds
    #[arg(short = 'd', long, value_name = "SECONDS", value_parser = common::cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Filegone>();

pub(crate) struct Filegone {
    args: Args,
    event: Record<types::event>,
    table: Table<Filegone>,
}

use types::gone_call as Call;

/// The calls' names and numbers, by enum gone_call (-1: none here).
const CALLS: [(&str, libc::c_long); Call::GONE_CALLS.0 as usize] = [
    ("unlink", nr(0)),
    ("unlinkat", libc::SYS_unlinkat),
    ("rmdir", nr(1)),
    ("rename", nr(2)),
    ("renameat", nr(3)),
    ("renameat2", libc::SYS_renameat2),
];

/// unlink, rmdir, rename and renameat where the architecture has them
/// (x86_64; arm64 has only the *at calls).
const fn nr(i: usize) -> libc::c_long {
    #[cfg(target_arch = "x86_64")]
    {
        [
            libc::SYS_unlink,
            libc::SYS_rmdir,
            libc::SYS_rename,
            libc::SYS_renameat,
        ][i]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = i;
        -1
    }
}

const AT_REMOVEDIR: u32 = 0x200;
const RENAME_EXCHANGE: u32 = 2;

impl Tool for Filegone {
    common::tool_types!(FilegoneSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Filegone {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenFilegoneSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        let own = probe::own_call_tracepoints(&mut rodata.nr_calls, CALLS.map(|(_, nr)| nr));
        let p = &mut open.progs;
        load_when(!own, [&mut p.gone_btf_enter, &mut p.gone_btf_exit]);
        load_when(own, [&mut p.gone_walk_first, &mut p.gone_walk_second]);
        let has =
            |name: &str| own && probe::tracepoint_exists("syscalls", &format!("sys_enter_{name}"));
        for (name, [enter, exit]) in [
            (
                "unlink",
                [&mut p.gone_enter_unlink, &mut p.gone_exit_unlink],
            ),
            (
                "unlinkat",
                [&mut p.gone_enter_unlinkat, &mut p.gone_exit_unlinkat],
            ),
            ("rmdir", [&mut p.gone_enter_rmdir, &mut p.gone_exit_rmdir]),
            (
                "rename",
                [&mut p.gone_enter_rename, &mut p.gone_exit_rename],
            ),
            (
                "renameat",
                [&mut p.gone_enter_renameat, &mut p.gone_exit_renameat],
            ),
            (
                "renameat2",
                [&mut p.gone_enter_renameat2, &mut p.gone_exit_renameat2],
            ),
        ] {
            load_when(has(name), [enter, exit]);
        }
        Ok(())
    }

    fn loaded(&mut self, skel: &mut FilegoneSkel<'_>) -> Result<()> {
        if skel.progs.gone_walk_first.autoload() {
            maps::install_tail_call(&skel.maps.walker, &skel.progs.gone_walk_first)?;
            maps::install_tail_call_at(&skel.maps.walker, 1, &skel.progs.gone_walk_second)?;
        }
        Ok(())
    }

    common::event_kind!();

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }
}

common::stamped_by_record!(Filegone);

impl Filegone {
    fn call(&self) -> &'static str {
        CALLS.get(self.event.call as usize).map_or("?", |c| c.0)
    }

    fn is_rename(&self) -> bool {
        self.event.call >= Call::GONE_RENAME.0
    }

    /// BCC's action, and renameat2's exchange (both names stay).
    fn action(&self) -> &'static str {
        if !self.is_rename() {
            "DELETE"
        } else if self.event.flags & RENAME_EXCHANGE != 0 {
            "SWAP"
        } else {
            "RENAME"
        }
    }

    /// Path `i` as passed, and absolute where its base directory was
    /// walked (the second path's may be the first's).
    fn path(&self, i: usize) -> Option<Cow<'_, [u8]>> {
        let e = &self.event;
        let buf = c_bytes_n(&e.buf);
        let (len0, len1) = (e.len[0] as usize, e.len[1] as usize);
        let (at, len) = if i == 0 { (0, len0) } else { (len0, len1) };
        let passed = buf.get(at..at + len)?;
        let passed = passed.strip_suffix(b"\0").unwrap_or(passed);
        if len == 0 {
            return None;
        }
        if passed.starts_with(b"/") {
            return Some(Cow::Borrowed(passed));
        }
        let size = (e.size as usize).min(buf.len());
        let walks = buf.get(len0 + len1..size).unwrap_or_default();
        // As the kernel side walked: path i's own base directory (bit i
        // of `walked`), after the first's where both were walked; a second
        // path in the first's directory shares the first's walk; one not
        // walked (tp_btf's single walk) stays as passed.
        let first_relative = !buf.starts_with(b"/");
        let shares = i == 1 && e.dfd[1] == e.dfd[0] && first_relative;
        let (skip, w) = if e.walked & (1 << i) != 0 {
            let before = if i == 1 && e.walked & 1 != 0 {
                e.depth[0]
            } else {
                0
            };
            (usize::from(before), i)
        } else if shares && e.walked & 1 != 0 {
            (0, 0)
        } else {
            return Some(Cow::Borrowed(passed));
        };
        let names: Vec<&[u8]> = walks.split(|&b| b == 0).skip(skip).collect();
        let mut full = walked_path(&names.join(&0u8), e.depth[w].into(), e.truncated[w] != 0);
        if !full.ends_with(b"/") {
            full.push(b'/');
        }
        full.extend_from_slice(passed.strip_prefix(b"./").unwrap_or(passed));
        Some(Cow::Owned(full))
    }

    /// BCC's FILE: the path, or `OLD > NEW` for a rename.
    fn file(&self) -> Vec<u8> {
        let mut f = self.path(0).unwrap_or_default().into_owned();
        if self.is_rename() {
            f.extend_from_slice(b" > ");
            f.extend_from_slice(&self.path(1).unwrap_or_default());
        }
        f
    }
}

/// BCC's TIME PID COMM ACTION FILE; in JSON each path apart.
fn table(args: &Args) -> Table<Filegone> {
    Table::<Filegone>::new(args.common.json).columns([
        columns::time(),
        columns::ts(),
        columns::pid(7),
        columns::tid(0).json_only(),
        columns::cgroup_id(),
        columns::comm("COMM", 16),
        Column::new("ACTION", 6, "action", |t: &Filegone| t.action().into()),
        Column::json("call", |t: &Filegone| t.call().into()),
        Column::json("directory", |t: &Filegone| {
            (!t.is_rename() && t.event.flags & AT_REMOVEDIR != 0).into()
        }),
        Column::new("FILE", 0, "", |t: &Filegone| Cell::Bytes(t.file().into())),
        Column::json("path", |t: &Filegone| {
            t.path(0).map_or(Cell::Null, Cell::Bytes)
        }),
        Column::json("new_path", |t: &Filegone| {
            if t.is_rename() {
                t.path(1).map_or(Cell::Null, Cell::Bytes)
            } else {
                Cell::Null
            }
        })
        .optional(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_bccs() {
        let t = table(&Args::try_parse_from(["filegone"]).unwrap());
        assert_eq!(t.header(), "TIME     PID     COMM             ACTION FILE");
    }

    fn event(call: Call, paths: &[&[u8]], walks: &[(u16, &[u8])], dfds: [i32; 2]) -> Filegone {
        let mut e = types::event {
            call: call.0,
            dfd: dfds,
            ..Default::default()
        };
        // A walk given with names, or for a relative path, was made.
        for (i, (_, names)) in walks.iter().enumerate() {
            if !names.is_empty() || !paths[i].starts_with(b"/") {
                e.walked |= 1 << i;
            }
        }
        let mut buf = Vec::new();
        for (i, p) in paths.iter().enumerate() {
            buf.extend_from_slice(p);
            buf.push(0);
            e.len[i] = (p.len() + 1) as u16;
        }
        for (i, (depth, names)) in walks.iter().enumerate() {
            buf.extend_from_slice(names);
            e.depth[i] = *depth;
        }
        for (i, b) in buf.iter().enumerate() {
            e.buf[i] = *b as i8;
        }
        e.size = buf.len() as u32;
        let mut record = Record::<types::event>::new(false);
        // SAFETY: the record's bytes, as the ring buffer hands them over.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                (&e as *const types::event).cast::<u8>(),
                std::mem::size_of::<types::event>(),
            )
        };
        record.read(bytes);
        Filegone {
            args: Args::try_parse_from(["filegone"]).unwrap(),
            event: record,
            table: Table::new(false),
        }
    }

    #[test]
    fn paths_are_made_absolute_from_their_walks() {
        let d = event(Call::GONE_UNLINK, &[b"f"], &[(2, b"x\0tmp\0")], [-100, 0]);
        assert_eq!(d.file(), b"/tmp/x/f");
        assert_eq!(d.action(), "DELETE");
        let a = event(Call::GONE_UNLINK, &[b"/etc/f"], &[], [-100, 0]);
        assert_eq!(a.file(), b"/etc/f");
        // Both relative to the cwd: one walk serves both.
        let r = event(
            Call::GONE_RENAME,
            &[b"a", b"./b"],
            &[(1, b"tmp\0")],
            [-100, -100],
        );
        assert_eq!(r.file(), b"/tmp/a > /tmp/b");
        // Each relative to a directory of its own.
        let r2 = event(
            Call::GONE_RENAMEAT,
            &[b"a", b"b"],
            &[(1, b"src\0"), (2, b"dst\0var\0")],
            [3, 4],
        );
        assert_eq!(r2.file(), b"/src/a > /var/dst/b");
        // The first absolute, the second relative: its walk is the only one.
        let r3 = event(
            Call::GONE_RENAMEAT,
            &[b"/x/a", b"b"],
            &[(0, b""), (1, b"y\0")],
            [3, 4],
        );
        assert_eq!(r3.file(), b"/x/a > /y/b");
        // tp_btf's single walk: a second path elsewhere stays as passed.
        let r4 = event(Call::GONE_RENAMEAT, &[b"a", b"b"], &[(1, b"src\0")], [3, 4]);
        assert_eq!(r4.file(), b"/src/a > b");
    }
}
