//! exitsnoop: how each process (or thread) ended: its exit code, or the
//! signal that killed it and whether it dumped core, its age and parent.
//! From sched:sched_process_exit (tp_btf, raw_tp or the classic
//! tracepoint): a process's exit is its last thread's.

mod info;

use std::borrow::Cow;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self, Hook};
use common::kinds::event::{columns, Cell, Column, Record, Stamped, Table};
use common::run::lifecycle::{self, Setup, Tool};

common::skeleton!("exitsnoop");
use skel::{types, ExitsnoopSkelBuilder, OpenExitsnoopSkel};

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    exitsnoop                # trace every process's exit
    exitsnoop -x             # only failures: a nonzero code or a signal
    exitsnoop -t             # include a time column (local time)
    exitsnoop --utc          # include a time column (UTC)
    exitsnoop -p 181         # only process 181
    exitsnoop --label=exit   # label each line
    exitsnoop -T             # each thread's exit (--per-thread)
    exitsnoop --json | jq .";

/// Trace process termination (exit, fatal signal): the code or the signal,
/// whether it dumped core, its age and its parent.
#[derive(Parser, Debug)]
#[command(name = "exitsnoop", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Include a time column, HH:MM:SS.mmm (local time)
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Include a time column in UTC (-t implied)
    #[arg(long)]
    utc: bool,
    /// Only these processes (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    /// Label each line with LABEL (a LABEL column first)
    #[arg(long, value_name = "LABEL")]
    label: Option<String>,
    /// Only failures: exits with a nonzero code, or by a signal
    #[arg(short = 'x', long)]
    failed: bool,
    /// Each thread's exit, not only each process's (libbpf-tools' -T)
    #[arg(short = 'T', long = "per-thread", visible_alias = "threaded")]
    per_thread: bool,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Exitsnoop>();

pub(crate) struct Exitsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Exitsnoop>,
    hook: Option<Hook>,
}

impl Tool for Exitsnoop {
    common::tool_types!(ExitsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Exitsnoop {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
            hook: None,
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.args.pid, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenExitsnoopSkel<'_>, _: &Setup) -> Result<()> {
        let hook = probe::tracepoint_hook("sched", "sched_process_exit", "2.6.32")?;
        let p = &mut open.progs;
        probe::hook_variant(hook, &mut p.exit_btf, &mut p.exit_raw, &mut p.exit_tp);
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.per_thread = self.args.per_thread;
        rodata.failed_only = self.args.failed;
        self.hook = Some(hook);
        Ok(())
    }

    common::event_kind!();
}

common::stamped_by_record!(Exitsnoop);

/// How a task ended, from the kernel's exit_code.
#[derive(Debug, PartialEq, Eq)]
struct Ending {
    /// The status given to exit() (0 when killed).
    status: u32,
    /// The signal that killed it, 0 for none.
    signal: i32,
    core: bool,
}

impl Ending {
    fn of(exit_code: u32) -> Ending {
        Ending {
            status: (exit_code >> 8) & 0xff,
            signal: (exit_code & 0x7f) as i32,
            core: exit_code & 0x80 != 0,
        }
    }

    /// BCC's EXIT_CODE: `0`, `code 3`, `signal 9 (KILL)`, and
    /// `, core dumped`.
    fn text(&self) -> String {
        let mut s = match (self.signal, self.status) {
            (0, 0) => "0".to_string(),
            (0, code) => format!("code {code}"),
            (sig, _) => format!("signal {sig} ({})", signal_name(sig)),
        };
        if self.core {
            s.push_str(", core dumped");
        }
        s
    }
}

fn signal_name(sig: i32) -> Cow<'static, str> {
    common::signals::name(sig).unwrap_or(Cow::Borrowed("unknown"))
}

impl Exitsnoop {
    fn ending(&self) -> Ending {
        Ending::of(self.event.exit_code)
    }
}

/// BCC's columns: [TIME-TZ] [LABEL] PCOMM PID PPID TID AGE(s) EXIT_CODE.
fn table(args: &Args) -> Table<Exitsnoop> {
    let zone = if args.utc {
        "UTC".to_string()
    } else {
        common::output::zone_name()
    };
    // A header lives as long as the table: one string, once per run.
    let header: &'static str = Box::leak(format!("TIME-{zone}").into_boxed_str());
    let time = Column::new(header, 12, "time", |t: &Exitsnoop| {
        let s = t.stamps();
        s.clock.hms_millis(s.head().ts_ns, t.args.utc).into()
    });
    Table::<Exitsnoop>::new(args.common.json)
        .column(args.timestamp || args.utc, time)
        .column(
            args.label.is_some(),
            Column::new("LABEL", 5, "label", |t: &Exitsnoop| match &t.args.label {
                Some(l) => l.as_str().into(),
                None => Cell::Null,
            })
            .optional(),
        )
        .columns([
            columns::ts(),
            columns::comm("PCOMM", 16),
            columns::pid(7),
            Column::new("PPID", 7, "ppid", |t| t.event.ppid.into()),
            columns::tid(7),
            columns::cgroup_id(),
            Column::new("AGE(s)", 7, "age", |t| {
                Cell::Float(t.event.age_ns as f64 / 1e9, 2)
            }),
            Column::new("EXIT_CODE", 0, "", |t| t.ending().text().into()),
            Column::json("exit_code", |t| t.ending().status.into()),
            Column::json("signal", |t: &Exitsnoop| match t.ending().signal {
                0 => Cell::Null,
                sig => signal_name(sig).into_owned().into(),
            })
            .optional(),
            Column::json("core_dumped", |t| t.ending().core.into()),
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_bccs() {
        let h = |args: &[&str]| table(&Args::try_parse_from(args).unwrap()).header();
        assert_eq!(
            h(&["exitsnoop"]),
            "PCOMM            PID     PPID    TID     AGE(s)  EXIT_CODE"
        );
        assert!(h(&["exitsnoop", "--utc", "--label", "x"]).starts_with("TIME-UTC     LABEL PCOMM "));
    }

    #[test]
    fn endings_read_as_bccs() {
        assert_eq!(Ending::of(0).text(), "0");
        assert_eq!(Ending::of(3 << 8).text(), "code 3");
        assert_eq!(Ending::of(9).text(), "signal 9 (KILL)");
        assert_eq!(
            Ending::of(0x80 | 11).text(),
            "signal 11 (SEGV), core dumped"
        );
    }
}
