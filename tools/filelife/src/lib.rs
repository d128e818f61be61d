//! filelife: files created and deleted while tracing, with their age.

mod info;

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::fileio::{self, Variant};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::c_bytes;
use common::run::lifecycle::{self, Setup, Tool};

common::skeleton!("filelife");
use skel::{types, FilelifeSkelBuilder, OpenFilelifeSkel};

common::event_record!(types::life_event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    filelife               # files created and deleted while tracing
    filelife -p 181        # only files created by process 181
    filelife --json | jq .";

/// Trace short-lived files: each file created and then deleted while
/// tracing, with its age at deletion and the process that deleted it.
#[derive(Parser, Debug)]
#[command(name = "filelife", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only files created by these processes (comma-separated pids; where
    /// the kernel has neither fentry nor kprobes: deleted by them)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// Where births are stamped: security_inode_create sees every create;
/// without it, vfs_create (mknod) and vfs_open of a created file.
const INODE_CREATE: [&str; 2] = ["security_inode_create", "vfs_unlink"];
const VFS_CREATE: [&str; 3] = ["vfs_create", "vfs_open", "vfs_unlink"];

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Filelife>();

/// The file systems the tracepoint mode covers, by the tracepoints that
/// tell it a file's last name went.
const TRACEPOINT_FS: [(&str, &[&str]); 2] = [
    ("ext4", &["ext4_unlink_exit"]),
    ("xfs", &["xfs_remove", "xfs_iunlink"]),
];

pub(crate) struct Filelife {
    args: Args,
    /// Where births and deaths are seen: fentry or kprobes on the VFS;
    /// Syscalls stands for neither: the file systems' own tracepoints.
    mode: Variant,
    /// security_inode_create is hooked (else vfs_create and vfs_open).
    inode_create: bool,
    /// In the tracepoint mode, the file systems whose tracepoints this
    /// kernel has (looked up once: a module's BTF is parsed for it).
    covered: Vec<&'static str>,
    event: Record<types::life_event>,
    table: Table<Filelife>,
}

impl Tool for Filelife {
    common::tool_types!(FilelifeSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        // The first set whose every function takes fentry, else kprobes.
        let (mode, inode_create) = [
            (Variant::Fentry, &INODE_CREATE[..]),
            (Variant::Fentry, &VFS_CREATE[..]),
            (Variant::Kprobe, &INODE_CREATE[..]),
            (Variant::Kprobe, &VFS_CREATE[..]),
        ]
        .into_iter()
        .find(|(mode, functions)| {
            functions.iter().all(|f| match mode {
                Variant::Fentry => probe::fentry_target(f),
                _ => probe::kprobe_target(f),
            })
        })
        .map(|(mode, functions)| (mode, functions.len() == INODE_CREATE.len()))
        .unwrap_or((Variant::Syscalls, false));
        let covered = if mode == Variant::Syscalls {
            tracepoint_fs()
        } else {
            Vec::new()
        };
        Ok(Filelife {
            table: table(args.common.json).containers(containers),
            args,
            mode,
            inode_create,
            covered,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenFilelifeSkel<'_>, _: &Setup) -> Result<()> {
        let tracepoints = self.mode == Variant::Syscalls;
        if tracepoints && self.covered.is_empty() {
            bail!(
                "needs fentry or kprobes on vfs_unlink and on security_inode_create (or \
                 vfs_create and vfs_open), or a file system's unlink tracepoint as a BTF \
                 tracepoint ({}), and this kernel offers none of them (fentry: {}, kprobes: {})",
                TRACEPOINT_FS.map(|(_, tps)| tps.join(" and ")).join(", "),
                if probe::features().fentry {
                    "not on these functions"
                } else {
                    "refused"
                },
                if probe::features().kprobe {
                    "not on these functions"
                } else {
                    "not in this kernel"
                },
            );
        }
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.boot_to_real_ns = boot_to_real_ns();
        rodata.sys_unlink = syscall_nr(UNLINK);
        rodata.sys_unlinkat = libc::SYS_unlinkat as u32;
        rodata.sys_rmdir = syscall_nr(RMDIR);
        rodata.create_args = probe::function_args("vfs_create").unwrap_or(4);
        rodata.unlink_args = probe::function_args("vfs_unlink").unwrap_or(3);
        let p = &mut open.progs;
        let (fentry, kprobe) = (self.mode == Variant::Fentry, self.mode == Variant::Kprobe);
        let inode = self.inode_create;
        probe::load_when(fentry && inode, [&mut p.fl_fentry_inode_create]);
        probe::load_when(
            fentry && !inode,
            [&mut p.fl_fentry_create, &mut p.fl_fentry_open],
        );
        probe::load_when(fentry, [&mut p.fl_fexit_unlink]);
        probe::load_when(kprobe && inode, [&mut p.fl_kprobe_inode_create]);
        probe::load_when(
            kprobe && !inode,
            [&mut p.fl_kprobe_create, &mut p.fl_kprobe_open],
        );
        probe::load_when(
            kprobe,
            [&mut p.fl_kprobe_unlink, &mut p.fl_kretprobe_unlink],
        );
        let covered = &self.covered;
        probe::load_when(
            tracepoints && covered.contains(&"ext4"),
            [&mut p.fl_ext4_unlink],
        );
        probe::load_when(
            tracepoints && covered.contains(&"xfs"),
            [&mut p.fl_xfs_remove, &mut p.fl_xfs_iunlink],
        );
        Ok(())
    }

    fn degraded(&self) -> Option<String> {
        (self.mode == Variant::Syscalls).then(|| tracepoint_note(&self.covered))
    }

    common::event_kind!();
}

common::stamped_by_record!(Filelife);

/// The file systems whose unlink tracepoint this kernel has as a BTF
/// tracepoint.
fn tracepoint_fs() -> Vec<&'static str> {
    if !probe::features().has(probe::Hook::TpBtf) {
        return Vec::new();
    }
    TRACEPOINT_FS
        .iter()
        .filter(|(fs, tps)| tps.iter().all(|tp| probe::btf_tracepoint_in_module(tp, fs)))
        .map(|(fs, _)| *fs)
        .collect()
}

/// The tracepoint mode in one line: what it sees, and which of the file
/// systems mounted now it does not.
fn tracepoint_note(covered: &[&str]) -> String {
    // ext3 is ext4's driver's; read-only kinds delete nothing; overlay's
    // files are its layers' (seen where those are covered).
    let counted = |t: &str| {
        !(covered.contains(&t)
            || (t == "ext3" && covered.contains(&"ext4"))
            || ["overlay", "squashfs", "iso9660", "erofs"].contains(&t))
    };
    let others: Vec<String> = fileio::mounted_types()
        .into_iter()
        .filter(|t| counted(t))
        .collect();
    format!(
        "tracepoint mode (no fentry or kprobes on the VFS here): files deleted on {}, aged from \
         their inode's creation time (files created before tracing too), -p naming the \
         deleting process; not seen in this mode: files on any other file system{}",
        covered.join(" and "),
        if others.is_empty() {
            String::new()
        } else {
            format!(" (mounted now: {})", others.join(", "))
        }
    )
}

/// CLOCK_REALTIME less CLOCK_BOOTTIME now: turns the kernel's boot-clock
/// timestamps into wall-clock time, which an inode's creation time is.
fn boot_to_real_ns() -> i64 {
    use common::output::clock_ns;
    clock_ns(libc::CLOCK_REALTIME) as i64 - clock_ns(libc::CLOCK_BOOTTIME) as i64
}

/// unlink(2) and rmdir(2) have numbers of their own on x86-64; arm64 has
/// unlinkat alone (u32::MAX: no such call).
#[cfg(target_arch = "x86_64")]
const UNLINK: Option<i64> = Some(libc::SYS_unlink);
#[cfg(target_arch = "x86_64")]
const RMDIR: Option<i64> = Some(libc::SYS_rmdir);
#[cfg(not(target_arch = "x86_64"))]
const UNLINK: Option<i64> = None;
#[cfg(not(target_arch = "x86_64"))]
const RMDIR: Option<i64> = None;

fn syscall_nr(nr: Option<i64>) -> u32 {
    nr.map_or(u32::MAX, |n| n as u32)
}

/// BCC's columns: TIME PID COMM AGE(s) FILE.
fn table(json: bool) -> Table<Filelife> {
    Table::<Filelife>::new(json).columns([
        // Text only: the JSON has ts, and no time key.
        columns::time().text_only(),
        columns::ts(),
        columns::pid(7),
        columns::tid(0).json_only(),
        columns::cgroup_id(),
        columns::comm("COMM", 16),
        Column::new("AGE(s)", 7, "age_s", |t| {
            Cell::Float(t.event.age_ns as f64 / 1e9, 2)
        }),
        Column::new("FILE", 0, "file", |t| Cell::bytes(c_bytes(&t.event.name))),
    ])
}
