//! biostacks: block I/O latency by the kernel stack that submitted it,
//! a log2 histogram under each stack (libbpf-tools' layout), or the stacks'
//! total latency as folded lines, JSON, a flame graph or a pprof profile.

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupArgs, CommonArgs, IdList};
use common::kernel::disks;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kinds::stack::{self as stacks, Look, PerStack, ShownArgs, StackArgs, Value};
use common::run::lifecycle::{self, Banner, Setup, Tool};

common::skeleton!("biostacks");
use skel::{BiostacksSkelBuilder, OpenBiostacksSkel};

const EXAMPLES: &str = "\
EXAMPLES:
    biostacks              # block I/O latency by submitting stack, at Ctrl-C
    biostacks 10           # trace for 10 seconds only
    biostacks -d sdc       # trace sdc only
    biostacks -m           # histograms in milliseconds
    biostacks -p 181       # only I/O submitted by process 181
    biostacks -f 30 > io.folded; flamegraph.pl io.folded > io.svg
    biostacks --svg io.svg 30   # the flame graph of total latency
    biostacks --containers # each stack rooted at its container
    biostacks --json 5 | jq .";

/// Trace block I/O latency by the kernel stack that submitted it: a log2
/// histogram for each process, disk and stack.
#[derive(Parser, Debug)]
#[command(name = "biostacks", version, after_help = EXAMPLES)]
struct Args {
    /// Trace this disk only (e.g. sda)
    #[arg(short = 'd', long, value_name = "DISK")]
    disk: Option<String>,
    /// Millisecond histograms
    #[arg(short = 'm', long)]
    milliseconds: bool,
    /// Trace I/O submitted by these processes only (comma-separated pids)
    #[arg(short = 'p', long, value_parser = cli::id_list)]
    pid: Option<IdList>,
    #[command(flatten)]
    cgroup: CgroupArgs,
    #[command(flatten)]
    stacks: StackArgs,
    /// Trace for DURATION seconds, then print (else until Ctrl-C)
    #[arg(value_name = "DURATION", value_parser = cli::seconds)]
    duration: Option<u64>,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Biostacks>();

/// Kernel stacks only: the block layer's submitter is often a kernel
/// thread, and what issued the I/O is in the kernel's frames.
const SHOWN: ShownArgs = ShownArgs {
    user_stacks_only: false,
    kernel_stacks_only: true,
    delimited: false,
};

struct Biostacks {
    args: Args,
    targ_dev: Option<u32>,
}

impl Tool for Biostacks {
    common::tool_types!(BiostacksSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let targ_dev = args.disk.as_deref().map(disks::resolve).transpose()?;
        Ok(Biostacks { args, targ_dev })
    }

    fn stacks(&self) -> Option<stacks::Spec<'_>> {
        let args = &self.args;
        Some(stacks::Spec {
            args: &args.stacks,
            common: &args.common,
            shown: &SHOWN,
            ids: self.args.pid.as_ref(),
            look: Look {
                hists: Some(PerStack {
                    unit: if args.milliseconds { "msecs" } else { "usecs" },
                    total_divisor: if args.milliseconds { 1_000_000 } else { 1000 },
                    labels: |k| vec![("disk", disks::name(k.dev))],
                }),
                ..Look::new(Value {
                    name: "us",
                    divisor: 1000,
                })
            },
            svg: stacks::Svg {
                title: "Block I/O Latency Flame Graph",
                count_name: "us",
                cold: true,
                required: true,
            },
            profile: stacks::Profile {
                sample_types: &[("io_latency", "nanoseconds")],
            },
            counts_full: "I/O not counted: the maps of stacks and histograms were full",
            duration: args.duration,
            interval: None,
            timestamp: false,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            disk: self.targ_dev,
            ..Filters::processes(&self.args.pid, self.args.cgroup.path())
        }
    }

    fn configure(&mut self, open: &mut OpenBiostacksSkel<'_>, _: &Setup) -> Result<()> {
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.millis = self.args.milliseconds;
        common::choose_block_request_programs!(open.progs)?;
        Ok(())
    }

    fn banner(&self) -> Banner {
        Banner::Note(banner(self.args.duration))
    }
}

/// libbpf-tools' line; with a duration, for how long.
fn banner(duration: Option<u64>) -> String {
    match duration {
        None => "Tracing block I/O with init stacks. Hit Ctrl-C to end.".into(),
        Some(_) => format!(
            "Tracing block I/O with init stacks{}",
            stacks::until(duration)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_banner_is_libbpf_tools() {
        assert_eq!(
            banner(None),
            "Tracing block I/O with init stacks. Hit Ctrl-C to end."
        );
        assert_eq!(
            banner(Some(5)),
            "Tracing block I/O with init stacks for 5 secs."
        );
    }

    #[test]
    fn options_parse() {
        let a = Args::try_parse_from(["biostacks", "-m", "-d", "sda", "-p", "3,4", "7"]).unwrap();
        assert!(a.milliseconds);
        assert_eq!(a.disk.as_deref(), Some("sda"));
        assert_eq!(a.duration, Some(7));
        assert!(Args::try_parse_from(["biostacks", "0"]).is_err());
        assert!(Args::try_parse_from(["biostacks", "-U"]).is_err());
    }
}
