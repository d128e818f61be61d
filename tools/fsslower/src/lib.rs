//! fsslower (ext4slower, xfsslower, btrfsslower, nfsslower): reads,
//! writes, opens and fsyncs of one file system slower than a threshold.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::fileio::{self, FileSystem as Fs, Variant, FSYNC, OPEN, READ, WRITE};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::c_bytes;
use common::run::lifecycle::{self, attach_all, Schedule, Setup, SkelOf, Tool};
use libbpf_rs::skel::{OpenSkel, Skel};
use libbpf_rs::Link;

common::skeleton!("fsslower");
use skel::{types, FsslowerSkel, FsslowerSkelBuilder, OpenFsslowerSkel};

common::event_record!(types::slow_event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    ext4slower             # ext4 operations slower than 10 ms
    fsslower -t xfs        # xfs operations slower than 10 ms
    ext4slower 1           # slower than 1 ms (or -m 1)
    ext4slower -j 1        # ... as CSV (BCC's -j; libbpf-tools' -c)
    ext4slower 0           # every operation (a lot of output)
    ext4slower -p 185      # only process 185
    nfsslower -d 10        # NFS, for 10 seconds
    btrfsslower --json 5 | jq .";

/// Trace reads, writes, opens and fsyncs of one file system slower than a
/// threshold, with the file's name, size and offset.
#[derive(Parser, Debug)]
#[command(name = "fsslower", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// The file system (default: the one the command is named for, as
    /// ext4slower)
    #[arg(short = 't', long = "type", value_enum, value_name = "FS")]
    fs: Option<Fs>,
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Minimum latency to show, in milliseconds (default 10; 0: every call)
    #[arg(
        short = 'm',
        long = "min",
        value_name = "MIN_MS",
        conflicts_with = "min_ms"
    )]
    min: Option<u64>,
    /// Print CSV: ENDTIME_us,TASK,PID,TYPE,BYTES,OFFSET_b,LATENCY_us,FILE
    #[arg(short = 'j', long, short_alias = 'c', conflicts_with = "json")]
    csv: bool,
    /// Trace for this many seconds, then exit
    #[arg(short = 'd', long, value_name = "SECS", value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    /// Minimum latency in milliseconds, as BCC's ext4slower takes it
    #[arg(value_name = "MIN_MS")]
    min_ms: Option<u64>,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// The file system a command name chooses (`ext4slower`,
/// `bpf-xfsslower`); none for `fsslower`.
fn of_program(program: &str) -> Option<Fs> {
    Fs::of_alias(info::INFO.invoked_as(program)?, "slower")
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Fsslower>();

pub(crate) struct Fsslower {
    args: Args,
    fs: Fs,
    mode: Variant,
    event: Record<types::slow_event>,
    table: Table<Fsslower>,
}

impl Fsslower {
    fn min_ms(&self) -> u64 {
        self.args.min.or(self.args.min_ms).unwrap_or(10)
    }

    fn syscall_note(&self) -> String {
        format!(
            "system call mode (no fentry or kprobes on {}'s file operations here): reads, \
             writes, opens and fsyncs timed at their system calls on files of {} file systems, \
             so the latency includes the VFS above the file system",
            self.fs.name(),
            self.fs.name()
        )
    }
}

impl Tool for Fsslower {
    common::tool_types!(FsslowerSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
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
        Ok(Fsslower {
            table: table(args.csv, args.common.json).containers(containers),
            args,
            fs,
            mode,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenFsslowerSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.regular_only = true;
        rodata.current_task_btf = probe::current_task_btf();
        rodata.rdonly_cast = probe::rdonly_cast();
        rodata.min_latency_ns = self.min_ms().saturating_mul(1_000_000);
        if self.mode == Variant::Syscalls {
            rodata.tick_ns = fileio::quick_call_tick_ns().unwrap_or(0);
        }
        let mode = self.mode;
        // The file system's own operations need no magic to tell them.
        rodata.fs_magic = if mode == Variant::Syscalls {
            self.fs.magic()
        } else {
            0
        };
        fileio::FsHooks::new(self.fs, mode, false).configure(open.open_object_mut())?;
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
        (self.mode == Variant::Syscalls).then(|| self.syscall_note())
    }

    fn hook_notes(&self) -> Vec<String> {
        match self.mode {
            Variant::Syscalls => vec![fileio::quick_calls_note(
                self.min_ms().saturating_mul(1_000_000),
            )],
            _ => Vec::new(),
        }
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        fileio::FsHooks::new(self.fs, self.mode, false).target(program)
    }

    fn loaded(&mut self, skel: &mut FsslowerSkel<'_>) -> Result<()> {
        if self.mode == Variant::Syscalls {
            fileio::fill(&skel.maps.file_ops, &[READ, WRITE, OPEN, FSYNC])?;
        }
        Ok(())
    }

    /// The fentry and kprobe programs name no function in their sections:
    /// each is attached here to the chosen file system's.
    fn attach(&mut self, skel: &mut SkelOf<'_, Self>) -> Result<Vec<Link>> {
        let mut links = attach_all(skel.object())?;
        links.extend(fileio::FsHooks::new(self.fs, self.mode, false).attach(skel.object())?);
        Ok(links)
    }

    common::event_kind!();

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }
}

common::stamped_by_record!(Fsslower);

/// BCC's T column: R read, W write, O open, S fsync.
fn op(e: &types::slow_event) -> &'static str {
    match e.op {
        READ => "R",
        WRITE => "W",
        OPEN => "O",
        FSYNC => "S",
        _ => "?",
    }
}

fn latency_ms(t: &Fsslower) -> f64 {
    t.event.latency_ns as f64 / 1e6
}

/// BCC's columns (TIME COMM PID T BYTES OFF_KB LAT(ms) FILENAME) with
/// libbpf-tools' whole COMM; `-j` BCC's CSV.
fn table(csv: bool, json: bool) -> Table<Fsslower> {
    if csv {
        return Table::csv().columns([
            Column::new("ENDTIME_us", 0, "", |t| {
                (t.event.stamps().head().ts_ns / 1000).into()
            }),
            columns::comm("TASK", 0),
            columns::pid(0),
            Column::new("TYPE", 0, "", |t| op(&t.event).into()),
            Column::new("BYTES", 0, "", |t| t.event.ret.into()),
            Column::new("OFFSET_b", 0, "", |t| t.event.offset.into()),
            Column::new("LATENCY_us", 0, "", |t| (t.event.latency_ns / 1000).into()),
            Column::new("FILE", 0, "", |t| Cell::bytes(c_bytes(&t.event.name))),
        ]);
    }
    Table::<Fsslower>::new(json).columns([
        // TIME in the text only: the JSON has ts.
        columns::time().text_only(),
        columns::ts(),
        columns::comm("COMM", 16),
        columns::pid(7),
        columns::tid(0).json_only(),
        columns::cgroup_id(),
        Column::new("T", 1, "op", |t| op(&t.event).into()),
        Column::new("BYTES", 7, "bytes", |t| t.event.ret.into()),
        Column::new("OFF_KB", 8, "", |t| (t.event.offset / 1024).into()),
        Column::json("offset", |t| t.event.offset.into()),
        Column::right("LAT(ms)", 7, "latency_ms", |t| {
            Cell::Float(latency_ms(t), 2)
        }),
        Column::new("FILENAME", 0, "file", |t| {
            Cell::bytes(c_bytes(&t.event.name))
        }),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_arguments_parse() {
        let a = Args::try_parse_from(["fsslower", "-t", "ext4"]).unwrap();
        assert_eq!((a.fs, a.min, a.min_ms), (Some(Fs::Ext4), None, None));
        let a = Args::try_parse_from(["ext4slower", "-c", "-d", "5", "3"]).unwrap();
        assert!(a.csv);
        assert_eq!((a.duration, a.min_ms), (Some(5), Some(3)));
    }

    #[test]
    fn the_program_name_chooses_the_file_system() {
        assert_eq!(of_program("ext4slower"), Some(Fs::Ext4));
        assert_eq!(of_program("bpf-xfsslower"), Some(Fs::Xfs));
        assert_eq!(of_program("btrfsslower"), Some(Fs::Btrfs));
        assert_eq!(of_program("nfsslower"), Some(Fs::Nfs));
        assert_eq!(of_program("fsslower"), None);
        assert_eq!(of_program("zfsslower"), None);
    }
}
