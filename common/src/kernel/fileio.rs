//! The file system calls the file tools count or time at sys_exit
//! (bpf/include/fileio.h): each syscall number's kind, put in the tool's
//! `file_ops` array before it attaches.

use anyhow::{Context, Result};
use libbpf_rs::{MapCore, MapFlags};

use crate::skel::types::file_op as Op;

pub const READ: u32 = Op::FOP_READ.0;
pub const WRITE: u32 = Op::FOP_WRITE.0;
pub const FSYNC: u32 = Op::FOP_FSYNC.0;
pub const OPEN: u32 = Op::FOP_OPEN.0;
pub const GETATTR: u32 = Op::FOP_GETATTR.0;
const MAX_NR: u32 = Op::FOP_MAX_NR.0;
const POSITIONAL: u32 = Op::FOP_POSITIONAL.0;

/// Each system call that reaches vfs_read, vfs_write, vfs_fsync_range or
/// vfs_open, by this machine's numbers, and its kind (with POSITIONAL
/// for those given their offset).
pub fn syscalls() -> Vec<(u32, u32)> {
    let mut v = vec![
        (libc::SYS_read, READ),
        (libc::SYS_readv, READ),
        (libc::SYS_pread64, READ | POSITIONAL),
        (libc::SYS_preadv, READ | POSITIONAL),
        (libc::SYS_preadv2, READ | POSITIONAL),
        (libc::SYS_write, WRITE),
        (libc::SYS_writev, WRITE),
        (libc::SYS_pwrite64, WRITE | POSITIONAL),
        (libc::SYS_pwritev, WRITE | POSITIONAL),
        (libc::SYS_pwritev2, WRITE | POSITIONAL),
        (libc::SYS_fsync, FSYNC),
        (libc::SYS_fdatasync, FSYNC),
        (libc::SYS_openat, OPEN),
        (libc::SYS_openat2, OPEN),
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([(libc::SYS_open, OPEN), (libc::SYS_creat, OPEN)]);
    v.into_iter().map(|(nr, op)| (nr as u32, op)).collect()
}

/// A file's type as fileio.bpf.h's file_type() gives it: R regular, S
/// socket, O other (a static string: no allocation per row).
pub fn type_name(t: i8) -> &'static str {
    match t as u8 {
        b'R' => "R",
        b'S' => "S",
        _ => "O",
    }
}

/// Fills a tool's `file_ops` array with the kinds in `wanted`.
pub fn fill(file_ops: &dyn MapCore, wanted: &[u32]) -> Result<()> {
    for (nr, op) in syscalls() {
        if nr < MAX_NR && wanted.contains(&(op & !POSITIONAL)) {
            file_ops
                .update(&nr.to_ne_bytes(), &op.to_ne_bytes(), MapFlags::ANY)
                .context("filling the system call table")?;
        }
    }
    Ok(())
}

/// The types of the file systems mounted now (the mount table's third
/// field), less those that hold no files of their own (proc, sysfs,
/// cgroup...), in name order.
pub fn mounted_types() -> Vec<String> {
    const PSEUDO: &[&str] = &[
        "autofs",
        "binfmt_misc",
        "bpf",
        "cgroup",
        "cgroup2",
        "configfs",
        "debugfs",
        "devpts",
        "devtmpfs",
        "efivarfs",
        "fusectl",
        "hugetlbfs",
        "mqueue",
        "nfsd",
        "nsfs",
        "proc",
        "pstore",
        "rpc_pipefs",
        "securityfs",
        "selinuxfs",
        "sysfs",
        "tracefs",
    ];
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    let types: std::collections::BTreeSet<String> = mounts
        .lines()
        .filter_map(|l| l.split(' ').nth(2))
        .filter(|t| !PSEUDO.contains(t))
        .map(str::to_string)
        .collect();
    types.into_iter().collect()
}

/// The file systems the per-file-system tools (fsslower, fsdist) know:
/// each one's operations and superblock magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FileSystem {
    Ext4,
    Xfs,
    Btrfs,
    Nfs,
    Zfs,
    F2fs,
}

impl FileSystem {
    pub fn name(self) -> &'static str {
        match self {
            FileSystem::Ext4 => "ext4",
            FileSystem::Xfs => "xfs",
            FileSystem::Btrfs => "btrfs",
            FileSystem::Nfs => "nfs",
            FileSystem::Zfs => "zfs",
            FileSystem::F2fs => "f2fs",
        }
    }

    /// Its read_iter, write_iter, open and fsync file operations.
    pub fn functions(self) -> [&'static str; 4] {
        match self {
            FileSystem::Ext4 => [
                "ext4_file_read_iter",
                "ext4_file_write_iter",
                "ext4_file_open",
                "ext4_sync_file",
            ],
            FileSystem::Xfs => [
                "xfs_file_read_iter",
                "xfs_file_write_iter",
                "xfs_file_open",
                "xfs_file_fsync",
            ],
            FileSystem::Btrfs => [
                "btrfs_file_read_iter",
                "btrfs_file_write_iter",
                "btrfs_file_open",
                "btrfs_sync_file",
            ],
            FileSystem::Nfs => [
                "nfs_file_read",
                "nfs_file_write",
                "nfs_file_open",
                "nfs_file_fsync",
            ],
            // OpenZFS's Linux file operations (zpl_file.c).
            FileSystem::Zfs => ["zpl_iter_read", "zpl_iter_write", "zpl_open", "zpl_fsync"],
            FileSystem::F2fs => [
                "f2fs_file_read_iter",
                "f2fs_file_write_iter",
                "f2fs_file_open",
                "f2fs_sync_file",
            ],
        }
    }

    /// Its inode operation getattr (stat(2) and friends), for fsdist.
    pub fn getattr(self) -> &'static str {
        match self {
            FileSystem::Ext4 => "ext4_file_getattr",
            FileSystem::Xfs => "xfs_vn_getattr",
            FileSystem::Btrfs => "btrfs_getattr",
            FileSystem::Nfs => "nfs_getattr",
            FileSystem::Zfs => "zpl_getattr",
            FileSystem::F2fs => "f2fs_getattr",
        }
    }

    /// True if a file system of this kind is mounted (the mount table's
    /// type field: nfs also as nfs4).
    pub fn mounted(self) -> bool {
        mounted_types()
            .iter()
            .any(|kind| kind == self.name() || (self == FileSystem::Nfs && kind == "nfs4"))
    }

    /// include/uapi/linux/magic.h's, and OpenZFS's ZFS_SUPER_MAGIC.
    pub fn magic(self) -> u64 {
        match self {
            FileSystem::Ext4 => 0xEF53,
            FileSystem::Xfs => 0x5846_5342,
            FileSystem::Btrfs => 0x9123_683E,
            FileSystem::Nfs => 0x6969,
            FileSystem::Zfs => 0x2FC1_2FC1,
            FileSystem::F2fs => 0xF2F5_2010,
        }
    }

    /// The file system an alias names before `suffix` (`ext4` of
    /// `ext4slower`).
    pub fn of_alias(alias: &str, suffix: &str) -> Option<FileSystem> {
        use clap::ValueEnum;
        FileSystem::from_str(alias.strip_suffix(suffix)?, false).ok()
    }

    /// The error where neither `-t` nor the command's name chose one.
    pub fn unchosen(aliases: &[&str]) -> anyhow::Error {
        let names: Vec<String> = <FileSystem as clap::ValueEnum>::value_variants()
            .iter()
            .map(|f| f.name().to_string())
            .collect();
        crate::usage::usage(format!(
            "which file system? Give -t {}, or run me as {}",
            names.join(", "),
            aliases.join(", ")
        ))
    }
}

/// The tick that bounds a system call's time from its CPU's run queue
/// clock (slowio.bpf.h's sys_surely_quick), and why there is none: the
/// kernel's tick where its configuration is there, where the programs are
/// tp_btf (task storage), where the run queue is found through the task's
/// CFS queue (CONFIG_FAIR_GROUP_SCHED), and where every CPU that runs a
/// task ticks (none runs without a tick: nohz_full).
pub fn quick_call_tick_ns() -> std::result::Result<u64, &'static str> {
    use crate::kernel::probe;
    if probe::disabled("tick") {
        return Err("turned off (BPFTOOLS_DISABLE=tick)");
    }
    if probe::task_state_hook() != Some(probe::Hook::TpBtf) {
        return Err("raw_tp programs (no task storage: before 5.11) read no run queue");
    }
    let Some(tick) = probe::tick_ns() else {
        return Err("the kernel's tick is not known (no /boot/config-RELEASE or /proc/config.gz)");
    };
    if probe::kernel_config_value("CONFIG_FAIR_GROUP_SCHED") != Some("y") {
        return Err(
            "the kernel has no CONFIG_FAIR_GROUP_SCHED (the run queue is found through it)",
        );
    }
    // Listed only where the kernel can run CPUs without a tick; "(null)"
    // where it runs none so.
    let tickless = match std::fs::read_to_string("/sys/devices/system/cpu/nohz_full") {
        Ok(cpus) => !matches!(cpus.trim(), "" | "(null)"),
        Err(_) => probe::kernel_config_value("CONFIG_NO_HZ_FULL") == Some("y"),
    };
    if tickless {
        return Err("CPUs may run tasks without a tick (nohz_full)");
    }
    Ok(tick)
}

/// How the system call mode's exit tells a quick call, for `-v` and
/// `--dry-run`.
pub fn quick_calls_note(min_latency_ns: u64) -> String {
    match quick_call_tick_ns() {
        Ok(tick) if min_latency_ns > 2 * tick => format!(
            "a call that ends on the CPU it began on, that CPU's run queue clock less than \
             {:.1} ms on (the threshold less two ticks at {} Hz), is known quick without a \
             second clock read",
            (min_latency_ns - 2 * tick) as f64 / 1e6,
            1_000_000_000 / tick
        ),
        Ok(tick) => format!(
            "every call's end reads the clock: the threshold is two ticks or less ({} Hz)",
            1_000_000_000 / tick
        ),
        Err(why) => format!("every call's end reads the clock: {why}"),
    }
}

/// Where a file tool sees the VFS calls it counts or times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// fentry (and fexit) on the VFS functions.
    Fentry,
    /// kprobes (and kretprobes) on them.
    Kprobe,
    /// Neither: the system calls that reach them, at the BTF tracepoints.
    Syscalls,
}

impl Variant {
    /// fentry where every one of `functions` takes it, else kprobes where
    /// each exists, else the system calls.
    pub fn choose(functions: &[&str]) -> Variant {
        use crate::kernel::probe;
        if functions.iter().all(|f| probe::fentry_target(f)) {
            Variant::Fentry
        } else if functions.iter().all(|f| probe::kprobe_target(f)) {
            Variant::Kprobe
        } else {
            Variant::Syscalls
        }
    }

    /// An error where the system calls are the way left and the kernel has
    /// no BTF tracepoints for them either.
    pub fn check(self, functions: &[&str]) -> Result<()> {
        use crate::kernel::probe;
        if self == Variant::Syscalls && !probe::features().has(probe::Hook::TpBtf) {
            anyhow::bail!(
                "this kernel offers neither fentry nor kprobes on {}, nor BTF tracepoints \
                 for their system calls",
                functions.join(", ")
            );
        }
        Ok(())
    }

    /// Loads only this variant's function programs, known by their
    /// sections: fentry and fexit ones where it is Fentry, kprobes and
    /// kretprobes where it is Kprobe. The tool's programs at tracepoints
    /// are its own to choose.
    pub fn load_its_programs(self, open: &mut libbpf_rs::OpenObject) {
        for mut prog in open.progs_mut() {
            let section = prog.section().to_string_lossy();
            let of = if section.starts_with("fentry") || section.starts_with("fexit") {
                Variant::Fentry
            } else if section.starts_with("kprobe") || section.starts_with("kretprobe") {
                Variant::Kprobe
            } else {
                continue;
            };
            if of != self {
                prog.set_autoload(false);
            }
        }
    }

    /// The slow I/O tools' system call programs (slowio.bpf.h), loaded in
    /// this mode only: tp_btf keeping each call's start in task storage,
    /// or, before 5.11, raw_tp keeping it by thread in a hash map.
    pub fn slow_syscall_programs(self, v: crate::kernel::probe::TaskStateVariants) -> Result<()> {
        use crate::kernel::probe;
        if self == Variant::Syscalls {
            probe::task_state_variant(v)?;
            return Ok(());
        }
        probe::load_when(false, v.btf.into_iter().chain(v.raw));
        probe::create_when(false, v.storage_maps.into_iter().chain(v.hash_maps))
    }
}

/// A file system's operations as the fentry and kprobe modes hook them,
/// by the programs' names (their sections name no function): `fs_fentry_OP`
/// and `fs_fexit_OP`, `fs_kprobe_OP`, and one `fs_kretprobe` for all, OP
/// being read, write, open, fsync or getattr.
#[derive(Debug, Clone)]
pub struct FsHooks {
    mode: Variant,
    /// Each operation hooked and the file system's function for it.
    ops: Vec<(&'static str, &'static str)>,
}

impl FsHooks {
    /// Read, write, open and fsync, and getattr where `getattr`.
    pub fn new(fs: FileSystem, mode: Variant, getattr: bool) -> FsHooks {
        let mut ops: Vec<_> = ["read", "write", "open", "fsync"]
            .into_iter()
            .zip(fs.functions())
            .collect();
        if getattr {
            ops.push(("getattr", fs.getattr()));
        }
        FsHooks { mode, ops }
    }

    /// `fs_KIND_OP`'s kind and operation; the kretprobe has none.
    fn parse(program: &str) -> Option<(&str, Option<&str>)> {
        let rest = program.strip_prefix("fs_")?;
        Some(match rest.split_once('_') {
            Some((kind, op)) => (kind, Some(op)),
            None => (rest, None),
        })
    }

    /// The function an operation's programs attach to; None for one not
    /// hooked.
    fn function(&self, op: &str) -> Option<&'static str> {
        self.ops.iter().find(|(o, _)| *o == op).map(|(_, f)| *f)
    }

    /// Before load: only this mode's function programs loaded (and none of
    /// an operation not hooked), fentry's targets set (libbpf refuses a
    /// target that is not in BTF, so an operation left out has none).
    pub fn configure(&self, open: &mut libbpf_rs::OpenObject) -> Result<()> {
        self.mode.load_its_programs(open);
        for mut prog in open.progs_mut() {
            let name = prog.name().to_string_lossy().into_owned();
            let Some((kind, Some(op))) = Self::parse(&name) else {
                continue;
            };
            if !["fentry", "fexit", "kprobe"].contains(&kind) {
                continue;
            }
            match self.function(op) {
                None => prog.set_autoload(false),
                Some(target) if self.mode == Variant::Fentry && kind != "kprobe" => {
                    prog.set_attach_target(0, Some(target.to_string()))
                        .with_context(|| format!("setting {name}'s target to {target}"))?;
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// The function a program attaches to, for `--dry-run` and `-v`; the
    /// shared kretprobe's are all of them.
    pub fn target(&self, program: &str) -> Option<String> {
        match Self::parse(program)? {
            (_, Some(op)) => self.function(op).map(str::to_string),
            ("kretprobe", None) => Some(
                self.ops
                    .iter()
                    .map(|(_, f)| *f)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            _ => None,
        }
    }

    /// Attaches the mode's programs to the file system's functions (after
    /// the tool's others, which name theirs).
    pub fn attach(&self, obj: &libbpf_rs::Object) -> Result<Vec<libbpf_rs::Link>> {
        let mut links = Vec::new();
        let kretprobe = obj
            .progs_mut()
            .find(|p| p.name().to_string_lossy() == "fs_kretprobe");
        for prog in obj.progs_mut() {
            let name = prog.name().to_string_lossy().into_owned();
            let Some((kind, Some(op))) = Self::parse(&name) else {
                continue;
            };
            let Some(function) = self.function(op) else {
                continue;
            };
            match (self.mode, kind) {
                (Variant::Fentry, "fentry" | "fexit") => {
                    links.push(prog.attach().with_context(|| format!("attaching {name}"))?);
                }
                (Variant::Kprobe, "kprobe") => {
                    let ret = kretprobe
                        .as_ref()
                        .context("no fs_kretprobe program in the object")?;
                    for (p, ret) in [(&prog, false), (ret, true)] {
                        links.push(
                            p.attach_kprobe(ret, function)
                                .with_context(|| format!("attaching a kprobe to {function}"))?,
                        );
                    }
                }
                _ => {}
            }
        }
        Ok(links)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_system_calls_within_the_table() {
        let all = syscalls();
        for op in [READ, WRITE, FSYNC, OPEN] {
            assert!(all.iter().any(|(_, o)| o & !POSITIONAL == op), "{op}");
        }
        assert!(all.iter().all(|(nr, _)| *nr < MAX_NR));
    }

    #[test]
    fn fs_hooks_name_each_program_s_function() {
        let ext4 = FsHooks::new(FileSystem::Ext4, Variant::Kprobe, false);
        assert_eq!(
            ext4.target("fs_kprobe_read").as_deref(),
            Some("ext4_file_read_iter")
        );
        assert_eq!(
            ext4.target("fs_fexit_fsync").as_deref(),
            Some("ext4_sync_file")
        );
        assert_eq!(ext4.target("fs_kprobe_getattr"), None);
        assert_eq!(
            ext4.target("fs_kretprobe").as_deref(),
            Some("ext4_file_read_iter,ext4_file_write_iter,ext4_file_open,ext4_sync_file")
        );
        let with = FsHooks::new(FileSystem::Ext4, Variant::Fentry, true);
        assert_eq!(
            with.target("fs_fentry_getattr").as_deref(),
            Some("ext4_file_getattr")
        );
        assert!(with
            .target("fs_kretprobe")
            .unwrap()
            .ends_with(",ext4_file_getattr"));
        assert_eq!(with.target("fs_sys_enter"), None);
        assert_eq!(with.target("handle_exit"), None);
    }
}
