//! stackcount: the stacks each hit of the probed points came from (user
//! functions, USDT probes, tracepoints, kernel functions), counted in the
//! kernel by process and stacks; the report prints BCC's multi-line
//! stacks, folded lines, JSON, a flame graph or a pprof profile (the stack
//! kind).

mod info;

use anyhow::Result;
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kinds::stack::{self as stacks, Look, ShownArgs, StackArgs, Value};
use common::probes::plan::{self, Planned};
use common::probes::{Accepts, Probe};
use common::run::lifecycle::{self, Banner, Setup, Tool};
use common::usage::usage;
use libbpf_rs::skel::{OpenSkel, Skel};
use libbpf_rs::Link;

common::skeleton!("stackcount");
use skel::{OpenStackcountSkel, StackcountSkel, StackcountSkelBuilder};

const EXAMPLES: &str = "\
EXAMPLES:
    stackcount c:malloc              # the stacks that call malloc, counted
    stackcount -p 185 c:malloc       # only process 185
    stackcount '/usr/bin/app:db_*'   # a program's functions, by pattern
    stackcount -r 'c:^(read|write)$' # a regular expression
    stackcount u:/usr/bin/app:query  # a USDT probe
    stackcount t:sched:sched_switch  # a tracepoint
    stackcount -f -D 10 c:malloc > out.folded   # folded, for 10 seconds
    stackcount -i 5 -T c:malloc      # every 5 seconds, with the time
    stackcount --svg malloc.svg -D 10 c:malloc  # a flame graph
    stackcount -U c:malloc           # user stacks only
    stackcount 'vfs_*'               # kernel functions (needs kprobes)";

/// Count the stacks that reach user functions, USDT probes, tracepoints or
/// kernel functions.
#[derive(Parser, Debug)]
// -v is BCC's: raw addresses; the libbpf log is --verbose alone.
#[command(name = "stackcount", version, after_help = EXAMPLES,
          mut_arg("verbose", |a| a.short(None)))]
struct Args {
    /// Only this process: its uprobes and USDT probes are placed in it
    /// alone, and a library named without a path is found in its maps
    #[arg(short = 'p', long)]
    pid: Option<u32>,
    /// Count only hits on this CPU
    #[arg(short = 'c', long, value_name = "CPU", value_parser = cli::cpu)]
    cpu: Option<u32>,
    /// Trace for DURATION seconds
    #[arg(short = 'D', long, value_name = "DURATION", value_parser = cli::seconds)]
    duration: Option<u64>,
    /// Print the stacks every INTERVAL seconds (what each interval added)
    #[arg(short = 'i', long, value_name = "INTERVAL", value_parser = cli::seconds)]
    interval: Option<u64>,
    /// Print the time above each report
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// The pattern is a regular expression (else * and ? are wildcards)
    #[arg(short = 'r', long)]
    regexp: bool,
    /// Show the address offsets in functions (name+0x1c)
    #[arg(short = 's', long)]
    offset: bool,
    /// Show each frame's address before its name (multi-line output)
    #[arg(short = 'v', long)]
    addresses: bool,
    /// Stacks per process (always: a user stack is named in its process;
    /// taken for BCC's -P)
    #[arg(short = 'P', long)]
    perpid: bool,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    shown: ShownArgs,
    #[command(flatten)]
    stacks: StackArgs,
    /// Where to count: [p:]LIB:FUNC (a program or library's functions),
    /// u:LIB[:PROVIDER]:PROBE (USDT), t:CATEGORY:EVENT (tracepoints), or
    /// FUNC (kernel functions); * and ? match any text and any character
    #[arg(value_name = "PATTERN")]
    pattern: String,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Stackcount>();

struct Stackcount {
    args: Args,
    probe: Probe,
    ids: Option<IdList>,
    /// The points, resolved once privileged, before load.
    plan: Vec<Planned>,
}

/// Its programs for each kind of point.
const HOOKS: plan::Hooks = plan::Hooks {
    uprobe: "sc_uprobe",
    uprobe_multi: "sc_umulti",
    usdt: "sc_usdt",
    tracepoint: "sc_tp",
    kprobe: "sc_kprobe",
    kprobe_multi: "sc_kmulti",
    sys_enter: "sc_sys_enter",
    sys_exit: "sc_sys_exit",
};

impl Tool for Stackcount {
    common::tool_types!(StackcountSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let accepts = Accepts {
            returns: false,
            patterns: true,
            regex: args.regexp,
        };
        let probe = Probe::parse(&args.pattern, accepts).map_err(|e| usage(e.to_string()))?;
        let ids = args.pid.map(|p| IdList(vec![p]));
        Ok(Stackcount {
            args,
            probe,
            ids,
            plan: Vec::new(),
        })
    }

    fn stacks(&self) -> Option<stacks::Spec<'_>> {
        let args = &self.args;
        Some(stacks::Spec {
            args: &args.stacks,
            common: &args.common,
            shown: &args.shown,
            ids: self.ids.as_ref(),
            look: Look {
                offsets: args.offset,
                addresses: args.addresses,
                ..Look::new(Value {
                    name: "count",
                    divisor: 1,
                })
            },
            svg: stacks::Svg {
                title: "Stack Count Flame Graph",
                count_name: "calls",
                cold: false,
                required: true,
            },
            profile: stacks::Profile {
                sample_types: &[("calls", "count")],
            },
            counts_full: "hits not counted: the counts map was full",
            duration: args.duration,
            interval: args.interval,
            timestamp: args.timestamp,
        })
    }

    fn filters(&self) -> Filters {
        Filters::processes(&self.ids, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenStackcountSkel<'_>, _: &Setup) -> Result<()> {
        // Frame pointer walks from a function's entry miss its caller:
        // the probes go past the frame setup, unless the user stacks are
        // unwound from copies (DWARF knows the entry's frame) or not shown.
        let whole_frames = !self.args.shown.kernel_stacks_only
            && self.args.stacks.unwind.unwind != common::unwind::Mode::Dwarf;
        let serving = plan::Serving {
            whole_frames,
            raw_syscalls: true,
        };
        self.plan = plan::plan_with(std::slice::from_ref(&self.probe), self.args.pid, serving)?;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.only_cpu = self.args.cpu.map_or(-1, |c| c as i32);
        rodata.placed_in_pid = plan::placed_in_pid(&self.plan, self.args.pid);
        // Where a function has no frame setup the probe stays at its entry:
        // the caller comes from the top of the stack.
        rodata.entry_callers = whole_frames;
        HOOKS.load_needed(open.open_object_mut(), &self.plan)
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        HOOKS.target(&self.plan, program)
    }

    fn hook_notes(&self) -> Vec<String> {
        plan::describe(&self.plan)
    }

    fn attach(&mut self, skel: &mut StackcountSkel<'_>) -> Result<Vec<Link>> {
        // The stacks tell the points apart: no cookies, so this runs on
        // kernels without them.
        HOOKS.attach_at(skel.object(), &self.plan, self.args.pid, false, 0)
    }

    fn banner(&self) -> Banner {
        Banner::Note(format!(
            "Tracing {} functions for \"{}\"{}",
            self.plan.len(),
            self.args.pattern,
            stacks::until(self.args.duration)
        ))
    }
}
