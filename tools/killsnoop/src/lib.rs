//! killsnoop (sigsnoop): signals sent: who sent which to whom, and what
//! came of it. By default every signal the kernel generates
//! (signal:signal_generate: those of kill(), tkill(), tgkill() and the
//! kernel's own) and the kill-family calls that failed before making one;
//! with -k those three calls only, each with its return (BCC's killsnoop).

mod info;

use std::borrow::Cow;

use anyhow::{bail, Result};
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, load_when, Hook};
use common::kinds::event::{columns, Cell, Column, Record, Stamped, Table};
use common::output::c_bytes;
use common::run::lifecycle::{self, Setup, Tool};

common::skeleton!("killsnoop");
use skel::{types, KillsnoopSkelBuilder, OpenKillsnoopSkel};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    killsnoop                # every signal sent, by a process or the kernel
    killsnoop -k             # kill(), tkill() and tgkill() calls only (BCC's)
    killsnoop -x             # only failures: calls that failed, signals not delivered
    killsnoop -p 181         # only signals sent by process 181
    killsnoop -T 181         # only signals sent to 181
    killsnoop -s TERM        # only SIGTERM (a name or a number)
    killsnoop -n             # signal names, not numbers
    killsnoop --json | jq .";

/// Trace signals sent: the sender, the signal, the target and the result.
#[derive(Parser, Debug)]
#[command(name = "killsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only kill(), tkill() and tgkill() calls, each with its return
    #[arg(short = 'k', long)]
    kill: bool,
    /// Only failures: calls that failed, and signals not delivered
    #[arg(short = 'x', long)]
    failed: bool,
    /// Only signals sent by these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Only signals sent to this process or thread id (kill()'s argument)
    #[arg(
        short = 'T',
        long,
        value_name = "TPID",
        allow_negative_numbers = true,
        value_parser = target_id
    )]
    tpid: Option<i32>,
    /// Only this signal: a name (TERM, SIGTERM, RTMIN+1) or a number
    #[arg(short = 's', long, value_parser = common::signals::parse)]
    signal: Option<i32>,
    /// Show signal names (SIGTERM), not numbers
    #[arg(short = 'n', long)]
    name: bool,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

/// `-T`: kill()'s target as it takes it (a negative process group, -1 for
/// all); 0 (the caller's own group) is no filter the kernel side can tell.
fn target_id(s: &str) -> Result<i32, String> {
    match s.parse::<i32>() {
        Ok(0) => Err("0 is not a target: give a process or thread id".into()),
        Ok(id) => Ok(id),
        Err(_) => Err(format!("'{s}' is not a process or thread id")),
    }
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Killsnoop>();

pub(crate) struct Killsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Killsnoop>,
    notes: Vec<String>,
}

impl Tool for Killsnoop {
    common::tool_types!(KillsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        let sigsnoop = info::INFO.invoked_as(&common::run::program_name()) == Some("sigsnoop");
        Ok(Killsnoop {
            table: table(&args, sigsnoop).containers(containers),
            args,
            event: Record::new(containers),
            notes: Vec::new(),
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenKillsnoopSkel<'_>, _: &Setup) -> Result<()> {
        let args = &self.args;
        let p = &mut open.progs;
        let generated = if args.kill {
            None
        } else {
            Some(probe::tracepoint_hook("signal", "signal_generate", "3.9")?)
        };
        load_when(generated == Some(Hook::TpBtf), [&mut p.kill_btf_generate]);
        load_when(generated == Some(Hook::RawTp), [&mut p.kill_raw_generate]);
        load_when(
            generated == Some(Hook::Tracepoint),
            [&mut p.kill_tp_generate],
        );
        let calls = probe::tracepoint_exists("syscalls", "sys_exit_kill");
        if !calls {
            if args.kill {
                bail!(
                    "-k: this kernel has no syscalls:sys_exit_kill tracepoint (tracefs \
                     mounted, CONFIG_FTRACE_SYSCALLS)"
                );
            }
            self.notes.push(
                "no system call tracepoints: kill(), tkill() and tgkill() calls that fail are \
                 not seen"
                    .into(),
            );
        }
        probe::syscall_args_variant(
            calls,
            [
                &mut p.kill_regs_kill,
                &mut p.kill_regs_tkill,
                &mut p.kill_regs_tgkill,
            ],
            [
                &mut p.kill_enter_kill,
                &mut p.kill_enter_tkill,
                &mut p.kill_enter_tgkill,
                &mut p.kill_exit_kill,
                &mut p.kill_exit_tkill,
                &mut p.kill_exit_tgkill,
            ],
        );
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.kill_only = args.kill;
        rodata.failed_only = args.failed;
        rodata.target_sig = args.signal.unwrap_or(0);
        rodata.target_tpid = args.tpid.unwrap_or(0);
        Ok(())
    }

    fn hook_notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    common::event_kind!();
}

common::stamped_by_record!(Killsnoop);

use types::signal_source as Source;

impl Killsnoop {
    fn signal_name(&self) -> Option<Cow<'static, str>> {
        common::signals::name(self.event.sig)
    }

    fn source(&self) -> &'static str {
        match Source(self.event.source) {
            Source::SOURCE_KILL => "kill",
            Source::SOURCE_TKILL => "tkill",
            Source::SOURCE_TGKILL => "tgkill",
            _ => "generated",
        }
    }
}

/// The width of a pid column as BCC sizes it: pid_max's digits and one.
fn pid_width() -> usize {
    std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .map(|s| s.trim().len() + 1)
        .unwrap_or(6)
}

/// BCC's killsnoop columns, TIME PID COMM SIG TPID RESULT (pid columns as
/// wide as pid_max); under the name sigsnoop, libbpf-tools' widths.
fn table(args: &Args, sigsnoop: bool) -> Table<Killsnoop> {
    let (time_w, pid_w, sig_w) = if sigsnoop {
        (8, 7, 9)
    } else {
        (9, pid_width(), 4)
    };
    let sig = if args.name {
        Column::new("SIG", sig_w, "", |t: &Killsnoop| match t.signal_name() {
            Some(n) => format!("SIG{n}").into(),
            None => t.event.sig.into(),
        })
    } else {
        Column::new("SIG", sig_w, "", |t: &Killsnoop| t.event.sig.into())
    };
    Table::<Killsnoop>::new(args.common.json).columns([
        Column::new("TIME", time_w, "time", |t: &Killsnoop| {
            t.stamps().hms().into()
        }),
        columns::ts(),
        columns::pid(pid_w),
        columns::tid(0).json_only(),
        columns::cgroup_id(),
        columns::comm("COMM", 16),
        sig,
        Column::json("sig", |t| t.event.sig.into()),
        Column::json("signal", |t: &Killsnoop| match t.signal_name() {
            Some(n) => n.into_owned().into(),
            None => Cell::Null,
        })
        .optional(),
        Column::new("TPID", pid_w, "tpid", |t| t.event.tpid.into()),
        Column::json("tcomm", |t: &Killsnoop| match c_bytes(&t.event.tcomm) {
            [] => Cell::Null,
            b => Cell::bytes(b),
        })
        .optional(),
        Column::new("RESULT", 0, "result", |t| t.event.result.into()),
        Column::json("source", |t| t.source().into()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_bccs_and_libbpf_tools() {
        let args = Args::try_parse_from(["killsnoop"]).unwrap();
        let w = pid_width();
        let bcc = format!(
            "TIME      {:w$} COMM             SIG  {:w$} RESULT",
            "PID", "TPID"
        );
        assert_eq!(table(&args, false).header(), bcc);
        assert_eq!(
            table(&args, true).header(),
            "TIME     PID     COMM             SIG       TPID    RESULT"
        );
    }
}
