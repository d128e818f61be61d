//! offcputime: time threads spend blocked, summed in the kernel by stack,
//! printed as BCC's multi-line stacks, folded lines, JSON, or a flame graph.

mod info;
mod report;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CommonArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe;
use common::kinds::stack::{self as stacks, StackArgs};
use common::output::Out;
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool, When};
use common::stacks::sym::Symbolizer;
use common::stacks::unwind::{self, StackTable, Unwinder};
use common::usage::usage;

common::skeleton!("offcputime");
use skel::{types, OffcputimeSkel, OffcputimeSkelBuilder, OpenOffcputimeSkel};

// SAFETY: a repr(C) struct of integers and a byte array, valid for any bytes.
unsafe impl plain::Plain for types::oc_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::oc_delta {}

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
    /// Show user space stacks only (no kernel space stacks)
    #[arg(short = 'U', long, conflicts_with = "kernel_stacks_only")]
    user_stacks_only: bool,
    /// Show kernel space stacks only (no user space stacks)
    #[arg(short = 'K', long)]
    kernel_stacks_only: bool,
    /// Insert a delimiter between kernel and user stacks
    #[arg(short = 'd', long)]
    delimited: bool,
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
    stacks: StackArgs,
    /// Duration of the trace, in seconds (default: until Ctrl-C)
    #[arg(value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Offcputime>();

struct Offcputime {
    args: Args,
    /// --svg's and --pprof's files, created before tracing.
    outputs: stacks::Outputs,
    /// Names only: offcputime prints no file:line.
    symbolizer: Symbolizer,
    /// When tracing started, for the profile's duration.
    started: Option<Instant>,
    /// --unwind dwarf (resolved from auto): user stacks unwound here.
    dwarf: Option<Dwarf>,
    /// The processes seen by the kernel side, whose memory maps are kept
    /// so that a process gone before the report keeps its names.
    keeper: stacks::ProcessKeeper,
}

/// --unwind dwarf's state: the stacks unwound from the copies, and the
/// off-CPU time summed by stack here rather than in the kernel.
struct Dwarf {
    unwinder: Unwinder,
    stacks: StackTable,
    /// By thread: the copy taken when it left the CPU (its number, and the
    /// unwound stack's index).
    left: HashMap<u32, (u64, u32)>,
    sums: HashMap<report::Key, u64>,
}

impl Dwarf {
    /// One record; returns the process of a stack copy when it is the
    /// first seen of it.
    fn record(&mut self, data: &[u8]) -> Option<u32> {
        if let Some(copy) = unwind::Copy::parse(data) {
            let new = !self.unwinder.knows(copy.tgid);
            let stack = self.unwinder.unwind(copy.tgid, copy.regs, copy.stack);
            let index = self.stacks.intern(stack);
            self.left.insert(copy.tid, (copy.seq, index));
            return new.then_some(copy.tgid);
        }
        if data.len() < std::mem::size_of::<types::oc_delta>() {
            return None;
        }
        let mut d = types::oc_delta::default();
        maps::copy_record(&mut d, data);
        if d.kind != types::oc_record_kind::OC_DELTA_KIND.0 {
            return None;
        }
        let user = match d.seq {
            0 => report::User::Absent,
            seq => match self.left.remove(&d.tid) {
                Some((s, index)) if s == seq => report::User::Unwound(index),
                // The copy was lost (the ring was full: counted there).
                _ => report::User::Missed,
            },
        };
        let key = report::Key {
            tgid: d.tgid,
            shown_id: d.tid,
            kern_stack_id: d.kern_stack_id,
            user,
            comm: d.comm,
        };
        *self.sums.entry(key).or_default() += d.delta_ns;
        None
    }
}

impl Tool for Offcputime {
    type Args = Args;
    type Builder = OffcputimeSkelBuilder;
    const INFO: &'static registry::ToolInfo = &info::INFO;

    fn new(args: Args) -> Result<Self> {
        if args.min_block_time > args.max_block_time {
            return Err(usage(format!(
                "-m {} is above -M {}: nothing could be counted",
                args.min_block_time, args.max_block_time
            )));
        }
        let outputs = stacks::Outputs::open(
            &args.stacks,
            stacks::Svg {
                title: "Off-CPU Time Flame Graph",
                count_name: "us",
                cold: true,
                required: true,
            },
            stacks::Profile {
                sample_types: &[("offcpu", "nanoseconds")],
            },
        )?;
        let symbolizer = Symbolizer::with_source_lines(false).verbose(args.common.verbose);
        let ids = args.pid.as_ref().or(args.tid.as_ref());
        let dwarf = args.stacks.dwarf(!args.kernel_stacks_only, ids);
        let dwarf = dwarf.then(|| Dwarf {
            unwinder: Unwinder::new(args.stacks.perf_max_stack_depth as usize),
            stacks: StackTable::default(),
            left: HashMap::new(),
            sums: HashMap::new(),
        });
        Ok(Offcputime {
            args,
            outputs,
            symbolizer,
            started: None,
            dwarf,
            keeper: stacks::ProcessKeeper::default(),
        })
    }

    fn common(&self) -> &CommonArgs {
        &self.args.common
    }

    fn machine_readable(&self) -> bool {
        self.args.common.json || self.args.stacks.folded
    }

    fn filters(&self) -> Filters {
        Filters {
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
        rodata.user_stacks = !args.kernel_stacks_only;
        rodata.kernel_stacks = !args.user_stacks_only;
        rodata.filter_state = args.state.is_some();
        rodata.state_mask = args.state.unwrap_or(0) as i64;
        rodata.min_block_ns = args.min_block_time.saturating_mul(1000);
        rodata.max_block_ns = args.max_block_time.saturating_mul(1000);
        let dwarf = self.dwarf.is_some();
        rodata.dwarf_unwind = dwarf;
        rodata.track_pids = !args.kernel_stacks_only && !dwarf;
        rodata.stack_copy_size = args.stacks.unwind.copy_size();
        args.stacks.size_maps(
            &mut open.maps.stackmap,
            &mut open.maps.ustack_scratch,
            dwarf,
        )?;
        if !dwarf {
            // Only dwarf's records use the ring: the smallest one.
            open.maps.events.set_max_entries(4096)?;
        }
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

    fn loaded(&mut self, skel: &mut OffcputimeSkel<'_>) -> Result<()> {
        if !self.args.kernel_stacks_only && self.dwarf.is_none() {
            self.keeper
                .watch(libbpf_rs::MapHandle::try_from(&skel.maps.seen_pids)?);
        }
        self.started = Some(Instant::now());
        Ok(())
    }

    fn banner(&self) -> Banner {
        Banner::Note(banner(&self.args))
    }

    fn schedule(&self) -> Schedule {
        Schedule {
            duration: self.args.duration.map(Duration::from_secs),
            ..Schedule::default()
        }
    }

    fn event(&mut self, data: &[u8], _: &mut Out) -> std::io::Result<()> {
        if let Some(d) = &mut self.dwarf {
            // A process's first stack: its memory map is kept for the
            // report too, which may come after it exits.
            if let Some(pid) = d.record(data) {
                self.symbolizer.keep_process(pid);
            }
        }
        Ok(())
    }

    fn idle(&mut self) -> bool {
        // While tracing, not after Ctrl-C: the report then starts at once.
        if !self.args.user_stacks_only {
            self.symbolizer.warm_kernel();
        }
        self.keeper.poll(&mut self.symbolizer);
        false
    }

    fn report(&mut self, skel: &OffcputimeSkel<'_>, out: &mut Out, _: When) -> Result<()> {
        let traced = self.started.map_or(Duration::ZERO, |s| s.elapsed());
        let files = self.outputs.report(traced);
        let dwarf = self.dwarf.as_mut().map(|d| {
            if let Some(note) = d.unwinder.stats.note() {
                common::note!("{note}");
            }
            (std::mem::take(&mut d.sums), &d.stacks)
        });
        report::print(
            &self.args,
            files,
            &skel.maps,
            dwarf,
            out,
            &mut self.symbolizer,
        )
    }

    fn error_note(&self, index: u32) -> Option<&'static str> {
        use types::oc_error as E;
        stacks::error_note(index).or(match E(index) {
            E::ERR_INFO_FULL => Some("off-CPU intervals not counted: the aggregation map was full"),
            _ => None,
        })
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
    let stacks = if args.user_stacks_only {
        "user"
    } else if args.kernel_stacks_only {
        "kernel"
    } else {
        "user + kernel"
    };
    let end = match args.duration {
        Some(d) => format!(" for {d} secs."),
        None => "... Hit Ctrl-C to end.".into(),
    };
    format!("Tracing off-CPU time (us) of {threads} by {stacks} stack{end}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked() {
        testkit::check_arguments::<Args>(&[
            &["offcputime", "0"][..],
            &["offcputime", "-p", "x"],
            &["offcputime", "-u", "-k"],
            &["offcputime", "-U", "-K"],
            &["offcputime", "-p", "1", "-t", "1"],
            &["offcputime", "--perf-max-stack-depth", "128"],
            &["offcputime", "--stack-storage-size", "0"],
            &["offcputime", "-f", "--json"],
            &["offcputime", "-m", "x"],
            &["offcputime", "18446744073709551615"],
            &["offcputime", "--unwind", "frames"],
            &["offcputime", "--stack-copy-size", "65537"],
        ]);
    }

    #[test]
    fn banner_names_the_threads_and_stacks() {
        let args = Args::try_parse_from(["offcputime", "-p", "3,4", "-U", "5"]).unwrap();
        assert_eq!(
            banner(&args),
            "Tracing off-CPU time (us) of PID 3,4 by user stack for 5 secs."
        );
    }
}
