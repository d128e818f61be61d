//! offwaketime: time threads spend blocked, summed in the kernel by their
//! stacks joined with the stacks of the tasks that woke them, printed as
//! BCC's joined stacks, folded lines (a wakeup flame graph), JSON, an SVG
//! flame graph or a pprof profile.

mod info;

use anyhow::Result;
use clap::Parser;
use common::kernel::filters::Filters;
use common::kernel::probe;
use common::kinds::stack::{self as stacks, Join, OffCpuLook, OffCpuToolArgs};
use common::run::lifecycle::{self, Banner, Setup, Tool};
use libbpf_rs::skel::OpenSkel;

common::skeleton!("offwaketime");
use skel::{OffwaketimeSkelBuilder, OpenOffwaketimeSkel};

const EXAMPLES: &str = "\
EXAMPLES:
    offwaketime             # trace off-CPU + waker stack time until Ctrl-C
    offwaketime 5           # trace for 5 seconds only
    offwaketime -f 5        # 5 seconds, and output in folded format
    offwaketime -f 30 > out.folded; flamegraph.pl out.folded > wake.svg
    offwaketime --svg wake.svg 30    # write the flame graph directly
    offwaketime --pprof wake.pb.gz 30; go tool pprof -top wake.pb.gz
    offwaketime -m 1000     # trace only events that last more than 1000 usec
    offwaketime -M 9000     # trace only events that last less than 9000 usec
    offwaketime -p 185      # only trace threads for PID 185
    offwaketime -t 188      # only trace thread 188
    offwaketime -u          # only trace user threads (no kernel)
    offwaketime -k          # only trace kernel threads (no user)
    offwaketime -U          # only show user space stacks (no kernel)
    offwaketime -K          # only show kernel space stacks (no user)
    offwaketime --unwind dwarf -p 185 # user stacks through code built
                                      # without frame pointers";

/// Summarize blocked time by off-CPU stack joined with the waker's stack:
/// where threads blocked, and what woke them.
#[derive(Parser, Debug)]
#[command(name = "offwaketime", version, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    all: OffCpuToolArgs,
}

/// The report's look.
const LOOK: OffCpuLook = OffCpuLook {
    per_thread: true,
    join: Join::OffWake,
    svg_title: "Off-Wake Time Flame Graph",
    sample_types: &[("offcpu", "nanoseconds")],
    counts_full: "off-CPU intervals not counted: the counts map was full",
};

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Offwaketime>();

struct Offwaketime {
    args: Args,
}

impl Tool for Offwaketime {
    common::tool_types!(OffwaketimeSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        args.all.off.check()?;
        Ok(Offwaketime { args })
    }

    fn stacks(&self) -> Option<stacks::Spec<'_>> {
        Some(self.args.all.spec(&LOOK))
    }

    fn filters(&self) -> Filters {
        self.args.all.off.filters()
    }

    fn configure(&mut self, open: &mut OpenOffwaketimeSkel<'_>, _: &Setup) -> Result<()> {
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
    args.all.banner("blocked time", "off-CPU and waker stack")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banner_names_the_threads_and_stacks() {
        let args = Args::try_parse_from(["offwaketime", "-t", "7", "-K", "5"]).unwrap();
        assert_eq!(
            banner(&args),
            "Tracing blocked time (us) of TID 7 by kernel off-CPU and waker stack for 5 secs."
        );
    }
}
