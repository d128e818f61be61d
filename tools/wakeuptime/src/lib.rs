//! wakeuptime: time threads spend blocked, from sleep to wakeup, summed in
//! the kernel by the stacks of the tasks that woke them, printed as BCC's
//! multi-line stacks, folded lines, JSON, an SVG flame graph or a pprof
//! profile.

mod info;

use anyhow::Result;
use clap::Parser;
use common::kernel::filters::Filters;
use common::kernel::probe;
use common::kinds::stack::{self as stacks, Join, OffCpuLook, OffCpuToolArgs};
use common::run::lifecycle::{self, Banner, Setup, Tool};
use libbpf_rs::skel::OpenSkel;

common::skeleton!("wakeuptime");
use skel::{OpenWakeuptimeSkel, WakeuptimeSkelBuilder};

const EXAMPLES: &str = "\
EXAMPLES:
    wakeuptime             # trace blocked time with waker stacks
    wakeuptime 5           # trace for 5 seconds only
    wakeuptime -f 5        # 5 seconds, and output in folded format
    wakeuptime -u          # don't include kernel threads (user only)
    wakeuptime -p 185      # trace for PID 185 only
    wakeuptime -t 188      # trace for thread 188 only
    wakeuptime -K          # kernel waker stacks only, as BCC's
    wakeuptime -m 1000     # only blocks of more than 1000 usec
    wakeuptime --svg wake.svg 30     # write the flame graph directly
    wakeuptime --unwind dwarf -p 185 # wakers' user stacks through code
                                     # built without frame pointers";

/// Summarize sleep to wakeup time by waker stack: what woke the threads
/// that blocked, and how long they had slept.
#[derive(Parser, Debug)]
// -v is BCC's: raw addresses; the libbpf log is --verbose alone.
#[command(name = "wakeuptime", version, after_help = EXAMPLES,
          mut_arg("verbose", |a| a.short(None)))]
struct Args {
    /// Show each frame's address before its name (multi-line output)
    #[arg(short = 'v', long)]
    addresses: bool,
    #[command(flatten)]
    all: OffCpuToolArgs,
}

/// The report's look.
const LOOK: OffCpuLook = OffCpuLook {
    // By process woken and waker process, as BCC's by name.
    per_thread: false,
    join: Join::WakeUp,
    svg_title: "Wakeup Time Flame Graph",
    sample_types: &[("blocked", "nanoseconds")],
    counts_full: "blocked intervals not counted: the counts map was full",
};

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Wakeuptime>();

struct Wakeuptime {
    args: Args,
}

impl Tool for Wakeuptime {
    common::tool_types!(WakeuptimeSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        args.all.off.check()?;
        Ok(Wakeuptime { args })
    }

    fn stacks(&self) -> Option<stacks::Spec<'_>> {
        let mut spec = self.args.all.spec(&LOOK);
        spec.look.addresses = self.args.addresses;
        Some(spec)
    }

    fn filters(&self) -> Filters {
        self.args.all.off.filters()
    }

    fn configure(&mut self, open: &mut OpenWakeuptimeSkel<'_>, _: &Setup) -> Result<()> {
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
    args.all.banner("blocked time", "waker stack")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banner_names_the_threads_and_stacks() {
        let args = Args::try_parse_from(["wakeuptime", "-t", "7", "-K", "5"]).unwrap();
        assert_eq!(
            banner(&args),
            "Tracing blocked time (us) of TID 7 by kernel waker stack for 5 secs."
        );
    }
}
