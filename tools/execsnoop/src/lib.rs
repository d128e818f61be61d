//! execsnoop: trace new processes (exec), with their arguments.

mod info;

use std::io;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, ContainerArgs};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::event::{columns, Cell, Column, Record, Table};
use common::output::{self, escape, Out};
use common::run::lifecycle::{self, Setup, Tool};
use regex::bytes::Regex;

common::skeleton!("execsnoop");
use skel::{types, ExecsnoopSkel, ExecsnoopSkelBuilder, OpenExecsnoopSkel};
use types::execsnoop_limits as Limits;

common::event_record!(types::event, types::task_header);

const EXAMPLES: &str = "\
EXAMPLES:
    execsnoop               # trace all exec() calls
    execsnoop -x            # include failed exec()s
    execsnoop -T            # include a time column (HH:MM:SS)
    execsnoop -U -u 1000    # only uid 1000, with a UID column
    execsnoop -u alice      # only processes of user alice
    execsnoop -n '^ba'      # only commands whose name matches a regex
    execsnoop -l 'ssh.*-p'  # only commands whose arguments match a regex
    execsnoop -P 181        # only children of pid 181
    execsnoop -q            # quote arguments
    execsnoop -c /sys/fs/cgroup/system.slice  # only this cgroup v2
    execsnoop --json | jq . # one JSON object per exec";

/// Trace new processes: every exec() system-wide, with its arguments.
///
/// Covers execve and execveat (fexecve, container runtimes). Arguments past
/// --max-args end in " ..."; control characters in them are escaped.
#[derive(Parser, Debug)]
#[command(name = "execsnoop", version, after_help = EXAMPLES)]
struct Args {
    /// Include a time column (HH:MM:SS)
    #[arg(short = 'T', long)]
    time: bool,
    /// Include a timestamp column: seconds since tracing began
    #[arg(short = 't', long)]
    timestamp: bool,
    /// Include failed exec()s
    #[arg(short = 'x', long)]
    fails: bool,
    /// Trace this uid (or user name) only
    #[arg(short = 'u', long, value_parser = cli::uid)]
    uid: Option<u32>,
    /// Include a UID column
    #[arg(short = 'U', long)]
    print_uid: bool,
    /// Quote each argument
    #[arg(short = 'q', long)]
    quote: bool,
    /// Only commands whose name (comm) matches this regex
    #[arg(short = 'n', long, value_name = "REGEX")]
    name: Option<Regex>,
    /// Only commands whose argument line matches this regex
    #[arg(short = 'l', long, value_name = "REGEX")]
    line: Option<Regex>,
    /// Maximum number of arguments to capture (1-60)
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_ARGS.0,
          value_parser = clap::value_parser!(u32).range(1..=Limits::TOTAL_MAX_ARGS.0 as i64))]
    max_args: u32,
    /// Trace children of this parent pid only
    #[arg(short = 'P', long, value_parser = cli::id)]
    ppid: Option<u32>,
    /// Include a CPU column
    #[arg(short = 'C', long)]
    print_cpu: bool,
    /// Include the parent's command name (PPCOMM column)
    #[arg(short = 'M', long)]
    print_pcomm: bool,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    containers: ContainerArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Execsnoop>();

struct Execsnoop {
    args: Args,
    event: Record<types::event>,
    table: Table<Execsnoop>,
}

impl Tool for Execsnoop {
    common::tool_types!(ExecsnoopSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let containers = args.containers.containers;
        Ok(Execsnoop {
            table: table(&args).containers(containers),
            args,
            event: Record::new(containers),
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            cgroup: self.args.cgroup.path(),
            uid: self.args.uid,
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenExecsnoopSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.include_failed = self.args.fails;
        rodata.max_args = self.args.max_args;
        rodata.filter_ppid = self.args.ppid.unwrap_or(0);
        // sched_process_exec as tp_btf where it exists: it runs on execs
        // only, and detaches at once. Failed execs (-x) are seen only at
        // the syscalls, whose tracepoints run on every syscall.
        let btf = probe::features().tp_btf && !self.args.fails;
        let p = &mut open.progs;
        probe::load_when(btf, [&mut p.exec_btf_exec]);
        probe::load_when(
            !btf,
            [
                &mut p.exec_read_args,
                &mut p.execve_enter,
                &mut p.execve_exit,
                &mut p.execveat_enter,
                &mut p.execveat_exit,
            ],
        );
        Ok(())
    }

    fn loaded(&mut self, skel: &mut ExecsnoopSkel<'_>) -> Result<()> {
        if skel.progs.exec_read_args.autoload() {
            maps::install_tail_call(&skel.maps.read_args, &skel.progs.exec_read_args)?;
        }
        Ok(())
    }

    common::event_kind!(table);

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        self.event.read(data);
        if !self.wanted() {
            return Ok(());
        }
        self.table.row(out, self)
    }
}

common::stamped_by_record!(Execsnoop);

/// The NUL-terminated arguments the kernel side captured, at most `max`;
/// true if there were more.
fn arguments(e: &types::event, max: usize) -> (Vec<&[u8]>, bool) {
    let size = (e.args_size as usize).min(e.args.len());
    let bytes = output::c_bytes_n(&e.args[..size]);
    let bytes = bytes.strip_suffix(b"\0").unwrap_or(bytes);
    if bytes.is_empty() {
        return (Vec::new(), false);
    }
    let mut all = bytes.split(|&b| b == 0);
    let argv: Vec<&[u8]> = all.by_ref().take(max).collect();
    (argv, all.next().is_some())
}

/// The columns, as BCC's: those the options ask for, every JSON key.
fn table(args: &Args) -> Table<Execsnoop> {
    Table::<Execsnoop>::new(args.common.json)
        .column(args.time, columns::time())
        .column(args.timestamp, columns::elapsed::<_, 3>(8))
        .column(
            args.print_uid,
            Column::new("UID", 6, "uid", |t| t.event.uid.into()),
        )
        .column(
            args.print_cpu,
            Column::new("CPU", 3, "cpu", |t| t.event.cpu.into()),
        )
        .columns([
            columns::comm("PCOMM", 16),
            columns::pid(7),
            Column::new("PPID", 7, "ppid", |t| t.event.ppid.into()),
            columns::cgroup_id(),
        ])
        .column(
            args.print_pcomm,
            Column::new("PPCOMM", 16, "parent_comm", |t| {
                Cell::bytes(output::c_bytes(&t.event.pcomm))
            }),
        )
        .columns([
            Column::right("RET", 3, "ret", |t| t.event.retval.into()),
            Column::new("ARGS", 0, "", |t| t.args_line().into()),
            Column::json("args", |t| Cell::List(t.argv().0)),
            Column::json("truncated", |t| t.truncated().into()),
        ])
}

impl Execsnoop {
    fn argv(&self) -> (Vec<&[u8]>, bool) {
        arguments(&self.event, self.args.max_args as usize)
    }

    fn truncated(&self) -> bool {
        self.event.truncated != 0 || self.argv().1
    }

    /// The arguments as the ARGS column shows them: escaped, quoted with
    /// -q, and " ..." when some were left out.
    fn args_line(&self) -> String {
        let mut line = String::new();
        for (i, arg) in self.argv().0.into_iter().enumerate() {
            if i > 0 {
                line.push(' ');
            }
            if self.args.quote {
                line += &format!("\"{}\"", escape(arg).replace('"', "\\\""));
            } else {
                line += &escape(arg);
            }
        }
        if self.truncated() {
            line += if line.is_empty() { "..." } else { " ..." };
        }
        line
    }

    /// The -n and -l filters, applied here (regexes).
    fn wanted(&self) -> bool {
        if let Some(re) = &self.args.name {
            if !re.is_match(output::c_bytes(&self.event.task.comm)) {
                return false;
            }
        }
        if let Some(re) = &self.args.line {
            if !re.is_match(&self.argv().0.join(&b' ')) {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_split_at_nuls_up_to_the_maximum() {
        let mut e = types::event::default();
        for (i, b) in b"ls\0\0/tmp\0".iter().enumerate() {
            e.args[i] = *b as i8;
        }
        e.args_size = 9;
        // An empty argument stays one.
        assert_eq!(arguments(&e, 20), (vec![&b"ls"[..], b"", b"/tmp"], false));
        assert_eq!(arguments(&e, 2), (vec![&b"ls"[..], b""], true));
        e.args_size = 0;
        assert_eq!(arguments(&e, 20), (Vec::<&[u8]>::new(), false));
    }
}
