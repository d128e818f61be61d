//! offcputime: time threads spend blocked, summed in the kernel by stack,
//! printed as BCC's multi-line stacks, folded lines, JSON, or a flame graph.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::stack::{self as stacks, Look, ShownArgs, StackArgs, Value};
use common::run::lifecycle::{self, Banner, Setup, Tool};
use common::usage::usage;

common::skeleton!("offcputime");
use skel::{OffcputimeSkelBuilder, OpenOffcputimeSkel};

const EXAMPLES: &str = "\
EXAMPLES:
    offcputime             # trace off-CPU stack time until Ctrl-C
    offcputime 5           # trace for 5 seconds only
    offcputime -f 5        # 5 seconds, and output in folded format
    offcputime -f -p 185 30 > out.folded; flamegraph.pl out.folded > off.svg
    offcputime --svg off.svg -p 185 30   # write the flame graph directly
    offcputime --pprof off.pb.gz 30; go tool pprof -top off.pb.gz
    offcputime -m 1000     # trace only events that last more than 1000 usec
    offcputime -M 10000    # trace only events that last less than 10000 usec
    offcputime -p 185,190  # only trace threads of these processes
    offcputime -t 188      # only trace thread 188
    offcputime -u          # only trace user threads (no kernel)
    offcputime -k          # only trace kernel threads (no user)
    offcputime -U          # only show user space stacks (no kernel)
    offcputime -K          # only show kernel space stacks (no user)
    offcputime --state 2   # only tasks blocked in TASK_UNINTERRUPTIBLE
    offcputime --unwind dwarf -p 185 # user stacks through code built
                                     # without frame pointers";

/// Summarize off-CPU time by stack trace: the time threads spend blocked
/// (sleeping, waiting for I/O or locks, preempted), with the stacks where
/// they blocked.
#[derive(Parser, Debug)]
#[command(name = "offcputime", version, after_help = EXAMPLES)]
struct Args {
    /// Trace these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list,
          conflicts_with_all = ["tid", "user_threads_only", "kernel_threads_only"])]
    pid: Option<IdList>,
    /// Trace these threads only (comma-separated tids)
    #[arg(short = 't', long, value_parser = cli::id_list,
          conflicts_with_all = ["user_threads_only", "kernel_threads_only"])]
    tid: Option<IdList>,
    /// User threads only (no kernel threads)
    #[arg(short = 'u', long, conflicts_with = "kernel_threads_only")]
    user_threads_only: bool,
    /// Kernel threads only (no user threads)
    #[arg(short = 'k', long)]
    kernel_threads_only: bool,
    /// Show the offset of each frame from its symbol (name+0x1c)
    #[arg(short = 's', long)]
    offset: bool,
    /// Only count blocks of at least this many microseconds
    #[arg(short = 'm', long, value_name = "US", default_value_t = 1)]
    min_block_time: u64,
    /// Only count blocks of at most this many microseconds
    #[arg(short = 'M', long, value_name = "US", default_value_t = u64::MAX)]
    max_block_time: u64,
    /// Only tasks going off CPU in this state: a mask of TASK_* bits
    /// (1 interruptible, 2 uninterruptible, ...), or 0 for runnable
    /// (preempted)
    #[arg(long, value_name = "MASK")]
    state: Option<u64>,
    #[command(flatten)]
    shown: ShownArgs,
    #[command(flatten)]
    stacks: StackArgs,
    /// Duration of the trace, in seconds (default: until Ctrl-C)
    #[arg(value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Offcputime>();

struct Offcputime {
    args: Args,
}

impl Tool for Offcputime {
    common::tool_types!(OffcputimeSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        if args.min_block_time > args.max_block_time {
            return Err(usage(format!(
                "-m {} is above -M {}: nothing could be counted",
                args.min_block_time, args.max_block_time
            )));
        }
        Ok(Offcputime { args })
    }

    fn stacks(&self) -> Option<stacks::Spec<'_>> {
        let args = &self.args;
        Some(stacks::Spec {
            args: &args.stacks,
            common: &args.common,
            shown: &args.shown,
            ids: args.pid.as_ref().or(args.tid.as_ref()),
            // Summed in nanoseconds, shown in microseconds, by thread.
            look: Look {
                per_thread: true,
                offsets: args.offset,
                ..Look::new(Value {
                    name: "us",
                    divisor: 1000,
                })
            },
            svg: stacks::Svg {
                title: "Off-CPU Time Flame Graph",
                count_name: "us",
                cold: true,
                required: true,
            },
            profile: stacks::Profile {
                sample_types: &[("offcpu", "nanoseconds")],
            },
            counts_full: "off-CPU intervals not counted: the counts map was full",
            duration: args.duration,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            cgroup: self.args.cgroup.path(),
            pids: self.args.pid.clone().map(|IdList(p)| p),
            tids: self.args.tid.clone().map(|IdList(t)| t),
            thread_option: Some("-t"),
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenOffcputimeSkel<'_>, _: &Setup) -> Result<()> {
        let args = &self.args;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.user_threads_only = args.user_threads_only;
        rodata.kernel_threads_only = args.kernel_threads_only;
        rodata.filter_state = args.state.is_some();
        rodata.state_mask = args.state.unwrap_or(0) as i64;
        rodata.min_block_ns = args.min_block_time.saturating_mul(1000);
        rodata.max_block_ns = args.max_block_time.saturating_mul(1000);
        // Switch-out state: task storage for tp_btf, a hash map for raw_tp.
        let (p, m) = (&mut open.progs, &mut open.maps);
        probe::task_state_variant(probe::TaskStateVariants {
            btf: vec![&mut p.oc_btf_switch],
            raw: vec![&mut p.oc_raw_switch],
            storage_maps: vec![&mut m.start_storage],
            hash_maps: vec![&mut m.start],
        })?;
        Ok(())
    }

    fn banner(&self) -> Banner {
        Banner::Note(banner(&self.args))
    }
}

fn banner(args: &Args) -> String {
    let threads = if let Some(p) = &args.pid {
        format!("PID {p}")
    } else if let Some(t) = &args.tid {
        format!("TID {t}")
    } else if args.user_threads_only {
        "user threads".into()
    } else if args.kernel_threads_only {
        "kernel threads".into()
    } else {
        "all threads".into()
    };
    format!(
        "Tracing off-CPU time (us) of {threads} by {} stack{}",
        args.shown.words(),
        stacks::until(args.duration)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banner_names_the_threads_and_stacks() {
        let args = Args::try_parse_from(["offcputime", "-p", "3,4", "-U", "5"]).unwrap();
        assert_eq!(
            banner(&args),
            "Tracing off-CPU time (us) of PID 3,4 by user stack for 5 secs."
        );
    }
}
