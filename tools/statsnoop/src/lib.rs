//! statsnoop: stat(), lstat(), newfstatat(), statx() and statfs() calls,
//! each with its path and result: what a process looked for, and whether it
//! was there. newfstatat and statx are what stat(1), ls, glibc's stat() and
//! Python's os.stat call on today's systems.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when};
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::c_bytes;
use common::run::lifecycle::{self, Schedule, Setup, Tool};

common::skeleton!("statsnoop");
use skel::{types, OpenStatsnoopSkel, StatsnoopSkelBuilder};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    statsnoop             # trace every stat-family call
    statsnoop -t          # include a time column (seconds)
    statsnoop -x          # only failed calls
    statsnoop -p 181      # only process 181
    statsnoop -d 10       # trace for 10 seconds
    statsnoop --json | jq .";

/// Trace stat-family calls (stat, lstat, newfstatat, statx, statfs): the
/// path and the result.
#[derive(Parser, Debug)]
#[command(name = "statsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a TIME(s) column: seconds since the first call shown
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Only failed calls
    #[arg(short = 'x', long)]
    failed: bool,
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

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Statsnoop>();

pub(crate) struct Statsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Statsnoop>,
}

impl Tool for Statsnoop {
    common::tool_types!(StatsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Statsnoop {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenStatsnoopSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.failed_only = self.args.failed;
        // sys_exit as tp_btf where it exists (one program, which tests the
        // call's number first, and detaches at once); else the calls' own
        // tracepoints, at exit only with bpf_task_pt_regs.
        let btf = probe::features().tp_btf;
        if btf {
            #[cfg(target_arch = "x86_64")]
            {
                rodata.nr_stat = libc::SYS_stat;
                rodata.nr_lstat = libc::SYS_lstat;
            }
            rodata.nr_newfstatat = libc::SYS_newfstatat;
            rodata.nr_statx = libc::SYS_statx;
            rodata.nr_statfs = libc::SYS_statfs;
        }
        let p = &mut open.progs;
        load_when(btf, [&mut p.stat_btf_exit]);
        probe::syscall_args_variant(
            !btf,
            [
                &mut p.stat_regs_stat,
                &mut p.stat_regs_lstat,
                &mut p.stat_regs_statfs,
                &mut p.stat_regs_newfstatat,
                &mut p.stat_regs_statx,
            ],
            [
                &mut p.stat_enter_stat,
                &mut p.stat_enter_lstat,
                &mut p.stat_enter_statfs,
                &mut p.stat_enter_newfstatat,
                &mut p.stat_enter_statx,
                &mut p.stat_exit_stat,
                &mut p.stat_exit_lstat,
                &mut p.stat_exit_statfs,
                &mut p.stat_exit_newfstatat,
                &mut p.stat_exit_statx,
            ],
        );
        Ok(())
    }

    common::event_kind!();

    fn schedule(&self) -> Schedule {
        Schedule::lasting(self.args.duration)
    }
}

common::stamped_by_record!(Statsnoop);

use types::stat_call as Call;

impl Statsnoop {
    fn call(&self) -> &'static str {
        match Call(self.event.call) {
            Call::CALL_STAT => "stat",
            Call::CALL_LSTAT => "lstat",
            Call::CALL_NEWFSTATAT => "newfstatat",
            Call::CALL_STATX => "statx",
            _ => "statfs",
        }
    }

    fn path(&self) -> &[u8] {
        let n = (self.event.size as usize).min(self.event.path.len());
        c_bytes(&self.event.path[..n])
    }

    fn errno(&self) -> i32 {
        (-self.event.ret).max(0)
    }
}

/// BCC's columns: [TIME(s)] PID COMM RET ERR PATH (BCC heads RET "FD").
fn table(args: &Args) -> Table<Statsnoop> {
    Table::<Statsnoop>::new(args.common.json)
        .column(args.timestamp, columns::since_first::<_, 9>(14))
        .columns([
            columns::ts(),
            columns::pid(7),
            columns::tid(0).json_only(),
            columns::cgroup_id(),
            columns::comm("COMM", 16),
            Column::right("RET", 4, "ret", |t: &Statsnoop| {
                (if t.event.ret < 0 { -1 } else { t.event.ret }).into()
            }),
            Column::right("ERR", 3, "errno", |t: &Statsnoop| t.errno().into()),
            Column::json("error", |t: &Statsnoop| {
                match common::errnos::name(t.errno()) {
                    Some(n) if t.errno() != 0 => n.into(),
                    _ => Cell::Null,
                }
            })
            .optional(),
            Column::json("call", |t: &Statsnoop| t.call().into()),
            Column::json("dfd", |t: &Statsnoop| t.event.dfd.into()),
            Column::new("PATH", 0, "path", |t: &Statsnoop| Cell::bytes(t.path())),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_bccs() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(h(&["statsnoop"]), "PID     COMM              RET ERR PATH");
        assert!(h(&["statsnoop", "-t"]).starts_with("TIME(s)        PID"));
    }
}
