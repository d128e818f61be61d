//! opensnoop: trace file opens.

mod info;
mod print;

use std::ffi::OsString;
use std::io;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{Record, Table};
use common::output::{self, Out};
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("opensnoop");
use skel::{types, OpenOpensnoopSkel, OpensnoopSkel, OpensnoopSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    opensnoop                 # trace all open() calls
    opensnoop -T              # include a time column (HH:MM:SS)
    opensnoop -U              # include a UID column
    opensnoop -x              # only failed opens
    opensnoop -p 181,182      # only these processes
    opensnoop -t 123          # only this thread
    opensnoop -u 1000         # only uid 1000 (or a user name)
    opensnoop -d 10           # trace for 10 seconds only
    opensnoop -n main         # only process names containing \"main\"
    opensnoop -e              # show extended fields (flags, mode)
    opensnoop -F              # show full paths, resolving relative ones
    opensnoop -f O_WRONLY -f O_RDWR  # only opens for writing
    opensnoop -c /sys/fs/cgroup/user.slice  # only this cgroup v2
    opensnoop --exec make -j4 # run a command and trace only it
    opensnoop --json | jq .   # one JSON object per open";

/// Trace file opens: open, openat, openat2 and creat, system-wide.
///
/// On failure FD is -1 and ERR the errno.
#[derive(Parser, Debug)]
#[command(name = "opensnoop", version, after_help = EXAMPLES)]
struct Args {
    /// Include a time column (HH:MM:SS)
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Include a UID column
    #[arg(short = 'U', long)]
    print_uid: bool,
    /// Only failed opens
    #[arg(short = 'x', long)]
    failed: bool,
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Trace these threads only (comma-separated tids)
    #[arg(short = 't', long, value_parser = cli::id_list)]
    tid: Option<IdList>,
    /// Trace this uid (or user name) only
    #[arg(short = 'u', long, value_parser = cli::uid)]
    uid: Option<u32>,
    /// Trace for this many seconds, then exit
    #[arg(short = 'd', long, value_name = "SECS", value_parser = cli::seconds)]
    duration: Option<u64>,
    /// Only process names (comm) containing this text
    #[arg(short = 'n', long, value_parser = cli::non_empty)]
    name: Option<String>,
    /// Show extended fields: FLAGS (octal) and MODE
    #[arg(short = 'e', long)]
    extended_fields: bool,
    /// Show full paths, resolving relative ones against the process's
    /// working directory (or the openat directory)
    #[arg(short = 'F', long)]
    full_path: bool,
    /// Only opens with this flag, e.g. O_WRONLY (repeatable: any matches)
    #[arg(short = 'f', long, value_name = "FLAG", value_parser = open_flag)]
    flag_filter: Vec<i32>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    /// Run this command and trace only it and its children; stop when it
    /// exits. Its stdout
    /// goes to stderr, so that stdout carries only the trace
    #[arg(long, value_name = "CMD", num_args = 1.., allow_hyphen_values = true,
          conflicts_with_all = ["pid", "tid"])]
    exec: Vec<OsString>,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// The open(2) flags -f accepts, by name.
const OPEN_FLAGS: &[(&str, i32)] = &[
    ("O_RDONLY", libc::O_RDONLY),
    ("O_WRONLY", libc::O_WRONLY),
    ("O_RDWR", libc::O_RDWR),
    ("O_CREAT", libc::O_CREAT),
    ("O_EXCL", libc::O_EXCL),
    ("O_NOCTTY", libc::O_NOCTTY),
    ("O_TRUNC", libc::O_TRUNC),
    ("O_APPEND", libc::O_APPEND),
    ("O_NONBLOCK", libc::O_NONBLOCK),
    ("O_DSYNC", libc::O_DSYNC),
    ("O_ASYNC", libc::O_ASYNC),
    ("O_DIRECT", libc::O_DIRECT),
    ("O_LARGEFILE", libc::O_LARGEFILE),
    ("O_DIRECTORY", libc::O_DIRECTORY),
    ("O_NOFOLLOW", libc::O_NOFOLLOW),
    ("O_NOATIME", libc::O_NOATIME),
    ("O_CLOEXEC", libc::O_CLOEXEC),
    ("O_SYNC", libc::O_SYNC),
    ("O_PATH", libc::O_PATH),
    ("O_TMPFILE", libc::O_TMPFILE),
];

/// Parses a flag name, with or without `O_`, in any case.
fn open_flag(s: &str) -> Result<i32, String> {
    let upper = s.to_ascii_uppercase();
    let name = if upper.starts_with("O_") {
        upper
    } else {
        format!("O_{upper}")
    };
    OPEN_FLAGS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let names: Vec<&str> = OPEN_FLAGS.iter().map(|(n, _)| *n).collect();
            format!("unknown open flag '{s}'; known: {}", names.join(", "))
        })
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Opensnoop>();

pub(crate) struct Opensnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Opensnoop>,
}

impl Tool for Opensnoop {
    common::tool_types!(OpensnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Opensnoop {
            table: print::table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn command(&self) -> Option<Vec<OsString>> {
        (!self.args.exec.is_empty()).then(|| self.args.exec.clone())
    }

    fn filters(&self) -> Filters {
        Filters {
            pids: self.args.pid.clone().map(|IdList(p)| p),
            tids: self.args.tid.clone().map(|IdList(t)| t),
            thread_option: Some("-t"),
            cgroup: self.args.cgroup.path(),
            uid: self.args.uid,
            command_pid: true,
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenOpensnoopSkel<'_>, setup: &Setup) -> Result<()> {
        let args = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.failed_only = args.failed;
        rodata.full_path = args.full_path;
        rodata.flag_mask = args.flag_filter.iter().fold(0, |m, f| m | *f as u32);
        rodata.match_rdonly = args.flag_filter.contains(&libc::O_RDONLY);
        // sys_exit as tp_btf where it exists (it detaches at once); else
        // the classic tracepoints, at exit only with bpf_task_pt_regs.
        let btf = probe::features().tp_btf;
        if btf {
            rodata.nr_open = libc::SYS_open;
            rodata.nr_openat = libc::SYS_openat;
            rodata.nr_openat2 = libc::SYS_openat2;
            rodata.nr_creat = libc::SYS_creat;
        }
        // Without tp_btf: the arguments from bpf_task_pt_regs at exit
        // where the kernel has it, else stashed at entry.
        let regs = !btf && probe::task_pt_regs();
        let entry_exit = !btf && !regs;
        let p = &mut open.progs;
        probe::load_when(btf, [&mut p.open_btf_exit]);
        probe::load_when(
            regs,
            [
                &mut p.open_regs_open,
                &mut p.open_regs_openat,
                &mut p.open_regs_openat2,
                &mut p.open_regs_creat,
            ],
        );
        probe::load_when(
            entry_exit,
            [
                &mut p.open_enter_open,
                &mut p.open_enter_openat,
                &mut p.open_enter_openat2,
                &mut p.open_enter_creat,
                &mut p.open_exit_open,
                &mut p.open_exit_openat,
                &mut p.open_exit_openat2,
                &mut p.open_exit_creat,
            ],
        );
        // The walker for the classic programs' -F (the tp_btf one walks
        // itself); the fork follower for a started command's children.
        probe::load_when(!btf && args.full_path, [&mut p.open_walk_dirs]);
        let follow = setup.child.is_some();
        probe::load_when(follow && btf, [&mut p.open_btf_follow_fork]);
        probe::load_when(follow && !btf, [&mut p.open_follow_fork]);
        Ok(())
    }

    fn loaded(&mut self, skel: &mut OpensnoopSkel<'_>) -> Result<()> {
        if skel.progs.open_walk_dirs.autoload() {
            maps::install_tail_call(&skel.maps.walker, &skel.progs.open_walk_dirs)?;
        }
        Ok(())
    }

    common::event_kind!(table);

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        if !output::comm_holds(&self.event.task.comm, self.args.name.as_deref()) {
            return Ok(());
        }
        self.table.row(out, self)
    }
}

common::stamped_by_record!(Opensnoop);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_names_parse_with_or_without_prefix() {
        assert_eq!(open_flag("O_WRONLY"), Ok(libc::O_WRONLY));
        assert_eq!(open_flag("o_creat"), Ok(libc::O_CREAT));
        assert_eq!(open_flag("CLOEXEC"), Ok(libc::O_CLOEXEC));
        assert_eq!(open_flag("O_RDONLY"), Ok(0));
        let err = open_flag("O_BOGUS").unwrap_err();
        assert!(err.contains("O_BOGUS") && err.contains("O_WRONLY"));
    }

    #[test]
    fn exec_takes_the_rest_of_the_line() {
        let args = Args::try_parse_from(["opensnoop", "-x", "--exec", "ls", "-la", "/"]).unwrap();
        assert!(args.failed);
        assert_eq!(args.exec, ["ls", "-la", "/"]);
    }
}
