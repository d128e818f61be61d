//! execsnoop: trace new processes (exec), with their arguments.

mod info;

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CommonArgs};
use common::filters::Filters;
use common::lifecycle::{self, Banner, Setup, Tool};
use common::output::{self, c_str, c_string, escape, Clock, Out};
use common::{maps, probe};
use libbpf_rs::skel::OpenSkel;
use regex::bytes::Regex;
use serde_json::json;

common::skeleton!("execsnoop");
use skel::{types, ExecsnoopSkel, ExecsnoopSkelBuilder, OpenExecsnoopSkel};
use types::execsnoop_limits as Limits;

// SAFETY: a repr(C) struct of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::event {}

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
    /// Trace this cgroup v2 (directory path) only
    #[arg(short = 'c', long, value_name = "PATH", value_parser = cli::cgroup_path)]
    cgroup: Option<PathBuf>,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Execsnoop>();

struct Execsnoop {
    args: Args,
    clock: Clock,
    event: Box<types::event>,
}

impl Tool for Execsnoop {
    type Args = Args;
    type Builder = ExecsnoopSkelBuilder;
    const INFO: &'static registry::ToolInfo = &info::INFO;

    fn new(args: Args) -> Result<Self> {
        Ok(Execsnoop {
            args,
            clock: Clock::start(),
            event: Box::default(),
        })
    }

    fn common(&self) -> &CommonArgs {
        &self.args.common
    }

    fn filters(&self) -> Filters {
        Filters {
            cgroup: self.args.cgroup.clone(),
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
        for mut prog in open.open_object_mut().progs_mut() {
            let is_btf = prog.name().to_string_lossy().starts_with("exec_btf_");
            prog.set_autoload(is_btf == btf);
        }
        Ok(())
    }

    fn loaded(&mut self, skel: &mut ExecsnoopSkel<'_>) -> Result<()> {
        if skel.progs.exec_read_args.autoload() {
            maps::install_tail_call(&skel.maps.read_args, &skel.progs.exec_read_args)?;
        }
        Ok(())
    }

    fn banner(&self) -> Banner {
        Banner::Header {
            header: header(&self.args),
            note: Self::INFO.banner.into(),
        }
    }

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        maps::copy_record(&mut *self.event, data);
        print_event(out, &self.args, &self.clock, &self.event)
    }
}

fn header(args: &Args) -> String {
    let mut h = String::new();
    if args.time {
        h += &format!("{:<8} ", "TIME");
    }
    if args.timestamp {
        h += &format!("{:<8} ", "TIME(s)");
    }
    if args.print_uid {
        h += &format!("{:<6} ", "UID");
    }
    if args.print_cpu {
        h += &format!("{:<3} ", "CPU");
    }
    h += &format!("{:<16} {:<7} {:<7} ", "PCOMM", "PID", "PPID");
    if args.print_pcomm {
        h += &format!("{:<16} ", "PPCOMM");
    }
    h + &format!("{:>3} ARGS", "RET")
}

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

fn print_event(out: &mut Out, args: &Args, clock: &Clock, e: &types::event) -> io::Result<()> {
    let (argv, more) = arguments(e, args.max_args as usize);
    if let Some(re) = &args.name {
        if !re.is_match(output::c_bytes(&e.comm)) {
            return Ok(());
        }
    }
    if let Some(re) = &args.line {
        if !re.is_match(&argv.join(&b' ')) {
            return Ok(());
        }
    }
    let truncated = e.truncated != 0 || more;
    if args.common.json {
        let argv: Vec<String> = argv
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        return out.json(&json!({
            "time": clock.hms(e.ts_ns),
            "ts": clock.elapsed(e.ts_ns),
            "uid": e.uid,
            "cpu": e.cpu,
            "comm": c_string(&e.comm),
            "pid": e.pid,
            "ppid": e.ppid,
            "parent_comm": c_string(&e.pcomm),
            "ret": e.retval,
            "args": argv,
            "truncated": truncated,
        }));
    }
    if args.time {
        write!(out, "{:<8} ", clock.hms(e.ts_ns))?;
    }
    if args.timestamp {
        write!(out, "{:<8.3} ", clock.elapsed(e.ts_ns))?;
    }
    if args.print_uid {
        write!(out, "{:<6} ", e.uid)?;
    }
    if args.print_cpu {
        write!(out, "{:<3} ", e.cpu)?;
    }
    write!(out, "{:<16} {:<7} {:<7} ", c_str(&e.comm), e.pid, e.ppid)?;
    if args.print_pcomm {
        write!(out, "{:<16} ", c_str(&e.pcomm))?;
    }
    write!(out, "{:>3}", e.retval)?;
    for arg in argv {
        if args.quote {
            write!(out, " \"{}\"", escape(arg).replace('"', "\\\""))?;
        } else {
            write!(out, " {}", escape(arg))?;
        }
    }
    if truncated {
        out.write_all(b" ...")?;
    }
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked() {
        common::testing::check_arguments::<Args>(&[
            &["execsnoop", "--max-args", "0"],
            &["execsnoop", "--max-args", "61"],
            &["execsnoop", "--max-args", "-3"],
            &["execsnoop", "-P", "notapid"],
            &["execsnoop", "-n", "("],
            &["execsnoop", "-u", "no-such-user-xyz"],
            &["execsnoop", "-c", "/no/such/cgroup"],
        ]);
    }

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
