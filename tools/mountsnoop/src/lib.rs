//! mountsnoop: mount(), umount(), fsopen(), fsmount() and move_mount()
//! calls, each as a line of C with its arguments decoded and its result:
//! who changed which mount namespace, and how. Each on its own tracepoint:
//! nothing runs on any other system call.

mod info;

use std::io::{self, Write};

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{columns, Cell, Column, Record, Stamped, Table};
use common::output::{c_bytes, escape, Out};
use common::run::lifecycle::{self, Setup, Tool};

common::skeleton!("mountsnoop");
use skel::{types, MountsnoopSkelBuilder, OpenMountsnoopSkel};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    mountsnoop            # trace mount and umount calls, and the new mount API's
    mountsnoop -P         # with the parent process
    mountsnoop -x         # only failed calls
    mountsnoop -t         # include a time column
    mountsnoop -d         # each call in detail, a field a line
    mountsnoop -p 181     # only process 181
    mountsnoop --json | jq .";

/// Trace mount(), umount() and the new mount API's fsopen(), fsmount() and
/// move_mount(): the caller, its mount namespace, the call and its result.
#[derive(Parser, Debug)]
#[command(name = "mountsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include the parent's command and pid (PCOMM, PPID)
    #[arg(short = 'P', long = "parent-process")]
    parent: bool,
    /// Include a TIME column (HH:MM:SS)
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Only failed calls
    #[arg(short = 'x', long)]
    failed: bool,
    /// Each call in detail: a field a line (libbpf-tools' -d)
    #[arg(short = 'd', long)]
    detailed: bool,
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Mountsnoop>();

pub(crate) struct Mountsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Mountsnoop>,
}

impl Tool for Mountsnoop {
    common::tool_types!(MountsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Mountsnoop {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenMountsnoopSkel<'_>, _: &Setup) -> Result<()> {
        if !probe::tracepoint_exists("syscalls", "sys_exit_mount") {
            bail!(
                "this kernel has no syscalls:sys_exit_mount tracepoint (tracefs mounted, \
                 CONFIG_FTRACE_SYSCALLS)"
            );
        }
        let p = &mut open.progs;
        probe::syscall_args_variant(
            true,
            [
                &mut p.mount_regs_mount,
                &mut p.mount_regs_umount,
                &mut p.mount_regs_fsopen,
                &mut p.mount_regs_fsmount,
                &mut p.mount_regs_move_mount,
            ],
            [
                &mut p.mount_enter_mount,
                &mut p.mount_enter_umount,
                &mut p.mount_enter_fsopen,
                &mut p.mount_enter_fsmount,
                &mut p.mount_enter_move_mount,
                &mut p.mount_exit_mount,
                &mut p.mount_exit_umount,
                &mut p.mount_exit_fsopen,
                &mut p.mount_exit_fsmount,
                &mut p.mount_exit_move_mount,
            ],
        );
        maps::rodata(&mut open.maps.rodata_data)?.failed_only = self.args.failed;
        Ok(())
    }

    fn table(&self) -> Option<&Table<Self>> {
        Some(&self.table)
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        if self.args.detailed && !self.args.common.json {
            return out.write_all(self.detailed().as_bytes());
        }
        self.table.row(out, self)
    }
}

common::stamped_by_record!(Mountsnoop);

use types::mount_call as Call;

/// (name, bit): mount(2)'s flags, from libc for the target.
const MOUNT_FLAGS: [(&str, u64); 26] = [
    ("MS_RDONLY", libc::MS_RDONLY),
    ("MS_NOSUID", libc::MS_NOSUID),
    ("MS_NODEV", libc::MS_NODEV),
    ("MS_NOEXEC", libc::MS_NOEXEC),
    ("MS_SYNCHRONOUS", libc::MS_SYNCHRONOUS),
    ("MS_REMOUNT", libc::MS_REMOUNT),
    ("MS_MANDLOCK", libc::MS_MANDLOCK),
    ("MS_DIRSYNC", libc::MS_DIRSYNC),
    ("MS_NOSYMFOLLOW", libc::MS_NOSYMFOLLOW),
    ("MS_NOATIME", libc::MS_NOATIME),
    ("MS_NODIRATIME", libc::MS_NODIRATIME),
    ("MS_BIND", libc::MS_BIND),
    ("MS_MOVE", libc::MS_MOVE),
    ("MS_REC", libc::MS_REC),
    ("MS_SILENT", libc::MS_SILENT),
    ("MS_POSIXACL", libc::MS_POSIXACL),
    ("MS_UNBINDABLE", libc::MS_UNBINDABLE),
    ("MS_PRIVATE", libc::MS_PRIVATE),
    ("MS_SLAVE", libc::MS_SLAVE),
    ("MS_SHARED", libc::MS_SHARED),
    ("MS_RELATIME", libc::MS_RELATIME),
    ("MS_KERNMOUNT", libc::MS_KERNMOUNT),
    ("MS_I_VERSION", libc::MS_I_VERSION),
    ("MS_STRICTATIME", libc::MS_STRICTATIME),
    ("MS_LAZYTIME", libc::MS_LAZYTIME),
    ("MS_ACTIVE", libc::MS_ACTIVE),
];

const UMOUNT_FLAGS: [(&str, u64); 4] = [
    ("MNT_FORCE", libc::MNT_FORCE as u64),
    ("MNT_DETACH", libc::MNT_DETACH as u64),
    ("MNT_EXPIRE", libc::MNT_EXPIRE as u64),
    ("UMOUNT_NOFOLLOW", libc::UMOUNT_NOFOLLOW as u64),
];

/// <linux/mount.h>'s, which libc does not have.
const FSOPEN_FLAGS: [(&str, u64); 1] = [("FSOPEN_CLOEXEC", 1)];
const FSMOUNT_FLAGS: [(&str, u64); 1] = [("FSMOUNT_CLOEXEC", 1)];
const MOUNT_ATTRS: [(&str, u64); 9] = [
    ("MOUNT_ATTR_RDONLY", 0x1),
    ("MOUNT_ATTR_NOSUID", 0x2),
    ("MOUNT_ATTR_NODEV", 0x4),
    ("MOUNT_ATTR_NOEXEC", 0x8),
    ("MOUNT_ATTR_NOATIME", 0x10),
    ("MOUNT_ATTR_STRICTATIME", 0x20),
    ("MOUNT_ATTR_NODIRATIME", 0x80),
    ("MOUNT_ATTR_IDMAP", 0x100000),
    ("MOUNT_ATTR_NOSYMFOLLOW", 0x200000),
];
const MOVE_MOUNT_FLAGS: [(&str, u64); 8] = [
    ("MOVE_MOUNT_F_SYMLINKS", 0x1),
    ("MOVE_MOUNT_F_AUTOMOUNTS", 0x2),
    ("MOVE_MOUNT_F_EMPTY_PATH", 0x4),
    ("MOVE_MOUNT_T_SYMLINKS", 0x10),
    ("MOVE_MOUNT_T_AUTOMOUNTS", 0x20),
    ("MOVE_MOUNT_T_EMPTY_PATH", 0x40),
    ("MOVE_MOUNT_SET_GROUP", 0x100),
    ("MOVE_MOUNT_BENEATH", 0x200),
];

/// Flags as BCC writes them: names joined by `|`, what is left in hex,
/// `0x0` for none.
fn flag_names(mut flags: u64, names: &[(&str, u64)]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for (name, bit) in names {
        if flags & bit != 0 {
            parts.push((*name).into());
            flags &= !bit;
        }
    }
    if flags != 0 || parts.is_empty() {
        parts.push(format!("{flags:#x}"));
    }
    parts.join("|")
}

/// mount(2)'s flags, with the old magic number in the high half.
fn mount_flags(mut flags: u64) -> String {
    let mut s = String::new();
    if flags & libc::MS_MGC_MSK == libc::MS_MGC_VAL {
        flags &= !libc::MS_MGC_MSK;
        s.push_str("MS_MGC_VAL|");
    }
    s + &flag_names(flags, &MOUNT_FLAGS)
}

fn quoted(field: &[i8]) -> String {
    format!("\"{}\"", escape(c_bytes(field)).replace('"', "\\\""))
}

fn dirfd(fd: i32) -> String {
    if fd == libc::AT_FDCWD {
        "AT_FDCWD".into()
    } else {
        fd.to_string()
    }
}

impl Mountsnoop {
    fn call_name(&self) -> &'static str {
        match Call(self.event.call) {
            Call::CALL_MOUNT => "mount",
            Call::CALL_UMOUNT => "umount",
            Call::CALL_FSOPEN => "fsopen",
            Call::CALL_FSMOUNT => "fsmount",
            _ => "move_mount",
        }
    }

    /// The result as BCC writes it: the value, or `-EPERM`.
    fn result(&self) -> String {
        match self.event.ret {
            r if r < 0 => match common::errnos::name(-r) {
                Some(n) => format!("-{n}"),
                None => r.to_string(),
            },
            r => r.to_string(),
        }
    }

    fn flags(&self) -> String {
        let f = self.event.flags;
        match Call(self.event.call) {
            Call::CALL_MOUNT => mount_flags(f),
            Call::CALL_UMOUNT => flag_names(f, &UMOUNT_FLAGS),
            Call::CALL_FSOPEN => flag_names(f, &FSOPEN_FLAGS),
            Call::CALL_FSMOUNT => flag_names(f, &FSMOUNT_FLAGS),
            _ => flag_names(f, &MOVE_MOUNT_FLAGS),
        }
    }

    /// The call as C: `mount("none", "/mnt", "tmpfs", MS_NOSUID, "") = 0`.
    fn call(&self) -> String {
        let e = &self.event;
        let args = match Call(e.call) {
            Call::CALL_MOUNT => format!(
                "{}, {}, {}, {}, {}",
                quoted(&e.str1),
                quoted(&e.str2),
                quoted(&e.fstype),
                self.flags(),
                quoted(&e.data)
            ),
            Call::CALL_UMOUNT | Call::CALL_FSOPEN => {
                format!("{}, {}", quoted(&e.str1), self.flags())
            }
            Call::CALL_FSMOUNT => format!(
                "{}, {}, {}",
                e.fd1,
                self.flags(),
                flag_names(e.attrs, &MOUNT_ATTRS)
            ),
            _ => format!(
                "{}, {}, {}, {}, {}",
                dirfd(e.fd1),
                quoted(&e.str1),
                dirfd(e.fd2),
                quoted(&e.str2),
                self.flags()
            ),
        };
        format!("{}({args}) = {}", self.call_name(), self.result())
    }

    /// libbpf-tools' -d: a field a line, a blank line after.
    fn detailed(&self) -> String {
        let e = &self.event;
        let h = self.stamps().head();
        let mut s = Vec::new();
        let _ = writeln!(s, "PID:    {}", h.pid);
        let _ = writeln!(s, "TID:    {}", h.tid);
        let _ = writeln!(s, "COMM:   {}", escape(c_bytes(&h.comm)));
        let _ = writeln!(s, "OP:     {}", self.call_name().to_uppercase());
        let _ = writeln!(s, "RET:    {}", self.result());
        let _ = writeln!(s, "MNT_NS: {}", e.mnt_ns);
        let _ = writeln!(s, "FS:     {}", escape(c_bytes(&e.fstype)));
        let _ = writeln!(s, "SOURCE: {}", escape(c_bytes(&e.str1)));
        let _ = writeln!(s, "TARGET: {}", escape(c_bytes(&e.str2)));
        let _ = writeln!(s, "DATA:   {}", escape(c_bytes(&e.data)));
        let _ = writeln!(s, "FLAGS:  {}\n", self.flags());
        String::from_utf8_lossy(&s).into_owned()
    }
}

fn text(field: &[i8]) -> Cell<'_> {
    match c_bytes(field) {
        [] => Cell::Null,
        b => Cell::bytes(b),
    }
}

/// BCC's columns: [TIME] COMM PID TID [PCOMM PPID] MNT_NS CALL.
fn table(args: &Args) -> Table<Mountsnoop> {
    Table::<Mountsnoop>::new(args.common.json)
        .column(args.timestamp, columns::time())
        .columns([
            columns::ts(),
            columns::comm("COMM", 16),
            columns::pid(7),
            columns::tid(7),
            columns::cgroup_id(),
        ])
        .column(
            args.parent,
            Column::new("PCOMM", 16, "pcomm", |t: &Mountsnoop| {
                Cell::bytes(c_bytes(&t.event.pcomm))
            }),
        )
        .column(
            args.parent,
            Column::new("PPID", 7, "ppid", |t: &Mountsnoop| t.event.ppid.into()),
        )
        .columns([
            Column::new("MNT_NS", 11, "mnt_ns", |t: &Mountsnoop| {
                t.event.mnt_ns.into()
            }),
            Column::new("CALL", 0, "", |t: &Mountsnoop| t.call().into()),
            Column::json("call", |t: &Mountsnoop| t.call_name().into()),
            Column::json("ret", |t: &Mountsnoop| t.event.ret.into()),
            Column::json("flags", |t: &Mountsnoop| t.flags().into()),
            Column::json("source", |t: &Mountsnoop| match Call(t.event.call) {
                Call::CALL_MOUNT | Call::CALL_MOVE_MOUNT => text(&t.event.str1),
                _ => Cell::Null,
            })
            .optional(),
            Column::json("target", |t: &Mountsnoop| match Call(t.event.call) {
                Call::CALL_MOUNT | Call::CALL_MOVE_MOUNT => text(&t.event.str2),
                Call::CALL_UMOUNT => text(&t.event.str1),
                _ => Cell::Null,
            })
            .optional(),
            Column::json("fstype", |t: &Mountsnoop| match Call(t.event.call) {
                Call::CALL_FSOPEN => text(&t.event.str1),
                _ => text(&t.event.fstype),
            })
            .optional(),
            Column::json("data", |t: &Mountsnoop| text(&t.event.data)).optional(),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_read_as_bccs() {
        assert_eq!(
            mount_flags(libc::MS_NOSUID | libc::MS_NODEV),
            "MS_NOSUID|MS_NODEV"
        );
        assert_eq!(
            mount_flags(0xC0ED_0000 | libc::MS_RDONLY),
            "MS_MGC_VAL|MS_RDONLY"
        );
        assert_eq!(flag_names(0, &UMOUNT_FLAGS), "0x0");
        assert_eq!(flag_names(2 | 0x100, &UMOUNT_FLAGS), "MNT_DETACH|0x100");
    }

    #[test]
    fn columns_are_bccs() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["mountsnoop"]),
            "COMM             PID     TID     MNT_NS      CALL"
        );
        assert_eq!(
            h(&["mountsnoop", "-P"]),
            "COMM             PID     TID     PCOMM            PPID    MNT_NS      CALL"
        );
    }
}
