//! fsdist (ext4dist, xfsdist, btrfsdist, nfsdist, zfsdist, f2fsdist): the
//! latency of one file system's reads, writes, opens, fsyncs and getattrs
//! as log2 histograms, one per operation, kept in the kernel.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, HistogramArgs, IdList};
use common::kernel::fileio::{self, FileSystem as Fs, Variant, FSYNC, GETATTR, OPEN, READ, WRITE};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::histogram;
use common::output::hist;
use common::run::lifecycle::{self, attach_all, Setup, SkelOf, Tool};
use libbpf_rs::skel::{OpenSkel, Skel};
use libbpf_rs::Link;
use serde_json::{Map, Value};

common::skeleton!("fsdist");
use skel::{types, FsdistSkel, FsdistSkelBuilder, OpenFsdistSkel};

// SAFETY: repr(C) structs of integers, valid for any bytes.
unsafe impl plain::Plain for types::fsdist_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    ext4dist               # ext4 operation latency as histograms, until Ctrl-C
    fsdist -t xfs          # the same for xfs
    ext4dist -m 1 10       # milliseconds, 1 second summaries, 10 times
    ext4dist -T 5          # 5 second summaries with a time line
    ext4dist -p 185        # only process 185
    nfsdist --per-container  # a set of histograms per container
    ext4dist --percentiles # p50, p90, p99, p99.9 and max per operation
    btrfsdist --json 5 1 | jq .";

/// Summarize the latency of one file system's reads, writes, opens, fsyncs
/// and getattrs as histograms.
#[derive(Parser, Debug)]
#[command(name = "fsdist", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// The file system (default: the one the command is named for, as
    /// ext4dist)
    #[arg(short = 't', long = "type", value_enum, value_name = "FS")]
    fs: Option<Fs>,
    /// Include a timestamp on each output (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Millisecond histograms (default: microseconds)
    #[arg(short = 'm', long)]
    milliseconds: bool,
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// The file system a command name chooses (`ext4dist`, `bpf-xfsdist`);
/// none for `fsdist`.
fn of_program(program: &str) -> Option<Fs> {
    Fs::of_alias(info::INFO.invoked_as(program)?, "dist")
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Fsdist>();

pub(crate) struct Fsdist {
    args: Args,
    fs: Fs,
    mode: Variant,
    /// Where the mode's getattr function takes the programs (not in the
    /// system call mode, which has no descriptor for it).
    getattr: bool,
    containers: histogram::Containers,
}

impl Fsdist {
    fn hooks(&self) -> fileio::FsHooks {
        fileio::FsHooks::new(self.fs, self.mode, self.getattr)
    }
}

impl Tool for Fsdist {
    common::tool_types!(FsdistSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let Some(fs) = args.fs.or_else(|| of_program(&common::run::program_name())) else {
            return Err(Fs::unchosen(info::INFO.aliases));
        };
        if !fs.mounted() {
            common::note!(
                "no {} file system is mounted now; tracing goes on (one may be mounted later)",
                fs.name()
            );
        }
        let mode = Variant::choose(&fs.functions());
        let getattr = match mode {
            Variant::Fentry => probe::fentry_target(fs.getattr()),
            Variant::Kprobe => probe::kprobe_target(fs.getattr()),
            Variant::Syscalls => false,
        };
        Ok(Fsdist {
            args,
            fs,
            mode,
            getattr,
            containers: histogram::Containers::default(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenFsdistSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.per_container = self.args.hist.per_container;
        rodata.millis = self.args.milliseconds;
        rodata.fine = self.args.hist.fine();
        rodata.current_task_btf = probe::current_task_btf();
        rodata.rdonly_cast = probe::rdonly_cast();
        rodata.fs_magic = self.fs.magic();
        let mode = self.mode;
        self.hooks().configure(open.open_object_mut())?;
        let (p, m) = (&mut open.progs, &mut open.maps);
        mode.slow_syscall_programs(probe::TaskStateVariants {
            btf: vec![&mut p.fs_sys_enter, &mut p.fs_sys_exit],
            raw: vec![&mut p.fs_raw_enter, &mut p.fs_raw_exit],
            storage_maps: vec![&mut m.start_storage],
            hash_maps: vec![&mut m.start],
        })?;
        mode.check(&self.fs.functions())
    }

    fn degraded(&self) -> Option<String> {
        (self.mode == Variant::Syscalls).then(|| {
            format!(
                "system call mode (no fentry or kprobes on {fs}'s file operations here): \
                 reads, writes, opens and fsyncs timed at their system calls on files of {fs} \
                 file systems, so the latency includes the VFS above the file system; \
                 getattr is not seen, nor I/O without a system call of its own (mmap, \
                 io_uring, the kernel's: nfsd, loop devices)",
                fs = self.fs.name()
            )
        })
    }

    fn hook_notes(&self) -> Vec<String> {
        if self.mode != Variant::Syscalls && !self.getattr {
            return vec![format!(
                "getattr not traced: {} takes no {} here",
                self.fs.getattr(),
                if self.mode == Variant::Fentry {
                    "fentry"
                } else {
                    "kprobe"
                }
            )];
        }
        Vec::new()
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        self.hooks().target(program)
    }

    fn loaded(&mut self, skel: &mut FsdistSkel<'_>) -> Result<()> {
        if self.mode == Variant::Syscalls {
            fileio::fill(&skel.maps.file_ops, &[READ, WRITE, OPEN, FSYNC])?;
        }
        Ok(())
    }

    /// The fentry and kprobe programs name no function in their sections:
    /// each is attached here to the chosen file system's.
    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let mut links = attach_all(skel.object())?;
        links.extend(self.hooks().attach(skel.object())?);
        Ok(links)
    }

    /// libbpf-tools' line, which names the file system.
    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Note(format!(
            "Tracing {} operation latency... Hit Ctrl-C to end.",
            self.fs.name()
        ))
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        Some(histogram::Spec {
            args: &self.args.hist,
            json: self.args.common.json,
            what: "fsdist, file system operation latency",
            metric: "fsdist_operation_latency",
            help: "Latency of the file system's reads, writes, opens, fsyncs and getattrs",
            unit: histogram::Unit::time(self.args.milliseconds),
            timestamp: self.args.timestamp,
            extension: false,
            layout: histogram::Layout::Log2,
        })
    }

    fn sections(&self, skel: &FsdistSkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let hist_args = &self.args.hist;
        let fine = hist_args.fine_map(&skel.maps.fine_hists);
        let entries: Vec<histogram::Entry<types::fsdist_key, types::hist, types::fine_hist>> =
            histogram::read_maps(&skel.maps.hists, fine, drain, |k: &types::fsdist_key| {
                (k.cgroup_id, op_rank(k.op))
            })?;
        Ok(entries
            .iter()
            .map(|e| {
                let mut labels = Map::new();
                let mut parts = Vec::new();
                if hist_args.per_container {
                    parts.push(self.containers.label(e.key.cgroup_id, &mut labels));
                }
                let op = op_name(e.key.op);
                parts.push(format!("operation = {op}"));
                labels.insert("fs".into(), Value::from(self.fs.name()));
                labels.insert("operation".into(), Value::from(op));
                hist::Section {
                    title: Some(parts.join("  ")),
                    labels,
                    slots: e.hist.slots.to_vec(),
                    count: e.hist.count,
                    total: e.hist.total,
                    ..Default::default()
                }
                .with_fine(e.fine.as_ref().map(|f| &f.slots[..]), hist_args.percentiles)
            })
            .collect())
    }
}

/// The operations in libbpf-tools' order: read, write, open, fsync,
/// getattr.
fn op_rank(op: u32) -> u32 {
    match op {
        READ => 0,
        WRITE => 1,
        OPEN => 2,
        FSYNC => 3,
        GETATTR => 4,
        _ => 5,
    }
}

fn op_name(op: u32) -> &'static str {
    match op {
        READ => "read",
        WRITE => "write",
        OPEN => "open",
        FSYNC => "fsync",
        GETATTR => "getattr",
        _ => "?",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        let a = Args::try_parse_from(["fsdist", "-t", "xfs", "-mT", "2", "3"]).unwrap();
        assert_eq!(a.fs, Some(Fs::Xfs));
        assert!(a.milliseconds && a.timestamp);
        assert_eq!(
            (a.hist.interval.interval, a.hist.interval.count),
            (Some(2), Some(3))
        );
        let a = Args::try_parse_from(["ext4dist", "-p", "1,2", "--per-container"]).unwrap();
        assert_eq!(a.fs, None);
        assert!(a.hist.per_container);
    }

    #[test]
    fn the_program_name_chooses_the_file_system() {
        assert_eq!(of_program("ext4dist"), Some(Fs::Ext4));
        assert_eq!(of_program("bpf-xfsdist"), Some(Fs::Xfs));
        assert_eq!(of_program("btrfsdist"), Some(Fs::Btrfs));
        assert_eq!(of_program("nfsdist"), Some(Fs::Nfs));
        assert_eq!(of_program("zfsdist"), Some(Fs::Zfs));
        assert_eq!(of_program("f2fsdist"), Some(Fs::F2fs));
        assert_eq!(of_program("fsdist"), None);
        assert_eq!(of_program("vfatdist"), None);
    }

    #[test]
    fn operations_sort_as_libbpf_tools_prints_them() {
        let mut ops = [GETATTR, FSYNC, OPEN, WRITE, READ];
        ops.sort_by_key(|&op| op_rank(op));
        let names: Vec<&str> = ops.iter().map(|&op| op_name(op)).collect();
        assert_eq!(names, ["read", "write", "open", "fsync", "getattr"]);
    }
}
