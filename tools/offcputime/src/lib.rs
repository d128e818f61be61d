//! offcputime: time threads spend blocked, summed in the kernel by stack,
//! printed as BCC's multi-line stacks, folded lines, JSON, or a flame graph.

mod info;

use anyhow::Result;
use clap::Parser;
use common::kernel::filters::Filters;
use common::kernel::probe;
use common::kinds::stack::{self as stacks, Join, OffCpuLook, OffCpuToolArgs};
use common::run::lifecycle::{self, Banner, Setup, Tool};
use libbpf_rs::skel::OpenSkel;

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
    #[command(flatten)]
    all: OffCpuToolArgs,
}

/// The report's look.
const LOOK: OffCpuLook = OffCpuLook {
    per_thread: true,
    join: Join::None,
    svg_title: "Off-CPU Time Flame Graph",
    sample_types: &[("offcpu", "nanoseconds")],
    counts_full: "off-CPU intervals not counted: the counts map was full",
};

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Offcputime>();

struct Offcputime {
    args: Args,
}

impl Tool for Offcputime {
    common::tool_types!(OffcputimeSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        args.all.off.check()?;
        Ok(Offcputime { args })
    }

    fn stacks(&self) -> Option<stacks::Spec<'_>> {
        Some(self.args.all.spec(&LOOK))
    }

    fn filters(&self) -> Filters {
        self.args.all.off.filters()
    }

    fn configure(&mut self, open: &mut OpenOffcputimeSkel<'_>, _: &Setup) -> Result<()> {
        self.args.all.off.configure(open.open_object_mut())?;
        // Switch-out state: task storage for tp_btf, a hash map for raw_tp.
        probe::task_state_sections(open.open_object_mut())?;
        Ok(())
    }

    fn banner(&self) -> Banner {
        Banner::Note(banner(&self.args))
    }
}

fn banner(args: &Args) -> String {
    args.all.banner("off-CPU time", "stack")
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
