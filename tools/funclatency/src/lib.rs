//! funclatency: the time of each call of user functions (uprobes; many as
//! one uprobe_multi link) or kernel functions (kprobes), as log2 histograms
//! kept in the kernel: one for all the functions matched, or with -F one
//! per function. Nested and recursive calls are timed each.

mod info;

use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use common::cli::{CgroupArgs, CommonArgs, HistogramArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kinds::histogram::{self, Layout, Unit};
use common::output::hist;
use common::probes::plan::{self, Planned};
use common::probes::{Accepts, At, Probe};
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool};
use common::usage::usage;
use libbpf_rs::skel::{OpenSkel, Skel};
use libbpf_rs::Link;
use serde_json::Value;

common::skeleton!("funclatency");
use skel::{types, FunclatencySkel, FunclatencySkelBuilder, OpenFunclatencySkel};

// SAFETY: repr(C) structs of integers (the generated skeleton types),
// valid for any bytes.
unsafe impl plain::Plain for types::fl_hist {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fine_hist {}

const EXAMPLES: &str = "\
EXAMPLES:
    funclatency c:read               # time libc's read(), in nanoseconds
    funclatency -u /usr/bin/app:handle_request   # in microseconds
    funclatency -m -p 181 c:fsync    # in milliseconds, process 181 only
    funclatency -F 'c:str*'          # a histogram per function matched
    funclatency -r 'c:^(read|write)$'  # a regular expression
    funclatency -i 2 -d 10 c:malloc  # every 2 seconds, for 10 seconds
    funclatency -l 1 /usr/bin/app:walk  # only the outermost of nested calls
    funclatency do_sys_open          # a kernel function (needs kprobes)
    funclatency --percentiles c:malloc";

/// Time calls of user and kernel functions as histograms.
#[derive(Parser, Debug)]
#[command(name = "funclatency", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only this process: its uprobes are placed in it alone, and a
    /// library named without a path is found in its maps
    #[arg(short = 'p', long)]
    pid: Option<u32>,
    /// Print a histogram every INTERVAL seconds
    #[arg(short = 'i', long = "interval", id = "every", value_name = "INTERVAL",
          value_parser = common::cli::seconds, conflicts_with = "interval")]
    every: Option<u64>,
    /// Trace for DURATION seconds
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = common::cli::seconds)]
    duration: Option<u64>,
    /// Print the time above each histogram
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// Microsecond histogram (default: nanoseconds)
    #[arg(short = 'u', long, conflicts_with = "milliseconds")]
    microseconds: bool,
    /// Millisecond histogram (default: nanoseconds)
    #[arg(short = 'm', long)]
    milliseconds: bool,
    /// A histogram per function
    #[arg(short = 'F', long)]
    function: bool,
    /// The pattern is a regular expression (else * and ? are wildcards)
    #[arg(short = 'r', long)]
    regexp: bool,
    /// Time nested calls this many levels deep (1: only the outermost)
    #[arg(short = 'l', long, value_name = "LEVELS",
          value_parser = clap::value_parser!(u32).range(1..=16), default_value_t = 16)]
    level: u32,
    #[command(flatten)]
    cgroup: CgroupArgs,
    /// What to time: [p:]LIB:FUNC (a program or library's functions) or
    /// FUNC (kernel functions); * and ? match any text and any character
    #[arg(value_name = "PATTERN")]
    pattern: String,
    #[command(flatten)]
    hist: HistogramArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Funclatency>();

pub(crate) struct Funclatency {
    args: Args,
    probe: Probe,
    /// The functions, resolved once privileged, before load.
    plan: Vec<Planned>,
    /// No attach cookies here (5.10-5.14): each function but the first is
    /// timed by a copy of the object of its own, sharing the first's maps.
    copies: Vec<FunclatencySkel<'static>>,
}

impl Funclatency {
    fn unit(&self) -> Unit {
        if self.args.milliseconds {
            Unit::Msecs
        } else if self.args.microseconds {
            Unit::Usecs
        } else {
            Unit::Nsecs
        }
    }
}

/// Its programs at functions' entries and returns, for each kind of point
/// (USDT probes and tracepoints have no return: it takes none).
const ENTRIES: plan::Hooks = plan::Hooks {
    uprobe: "fl_uprobe_enter",
    uprobe_multi: "fl_umulti_enter",
    kprobe: "fl_kprobe_enter",
    kprobe_multi: "fl_kmulti_enter",
    ..plan::Hooks::NONE
};
const EXITS: plan::Hooks = plan::Hooks {
    uprobe: "fl_uprobe_exit",
    uprobe_multi: "fl_umulti_exit",
    kprobe: "fl_kprobe_exit",
    kprobe_multi: "fl_kmulti_exit",
    ..plan::Hooks::NONE
};

/// Attaches `skel`'s programs to `points` (the plan's from index `base`):
/// the returns first, as an entry without its return would leave a call
/// in progress behind.
fn attach_points(
    skel: &FunclatencySkel<'_>,
    points: &[Planned],
    pid: Option<u32>,
    base: usize,
) -> Result<Vec<Link>> {
    let cookies = common::kernel::probe::attach_cookie();
    let returns: Vec<Planned> = points
        .iter()
        .map(|p| Planned {
            at: At::Return,
            ..p.clone()
        })
        .collect();
    let obj = skel.object();
    let mut links = EXITS.attach_at(obj, &returns, pid, cookies, base)?;
    links.extend(ENTRIES.attach_at(obj, points, pid, cookies, base)?);
    Ok(links)
}

impl Funclatency {
    /// A copy of the loaded object `main` that times point `i` alone: the
    /// same settings, `main`'s maps, only the programs `i` needs.
    fn copy(&self, main: &FunclatencySkel<'_>, i: usize) -> Result<FunclatencySkel<'static>> {
        use anyhow::Context as _;
        let settings = main
            .maps
            .rodata_data
            .copied()
            .context("the BPF object has no read-only data")?;
        maps::load_copy::<FunclatencySkelBuilder>(main.object(), |open| {
            let rodata = maps::rodata(&mut open.maps.rodata_data)?;
            *rodata = settings;
            rodata.lone_point = i as u32;
            for hooks in [ENTRIES, EXITS] {
                hooks.load_needed(open.open_object_mut(), &self.plan[i..=i])?;
            }
            Ok(())
        })
        .with_context(|| format!("the programs for {}", self.plan[i].label))
    }
}

impl Tool for Funclatency {
    common::tool_types!(FunclatencySkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let accepts = Accepts {
            returns: false,
            patterns: true,
            regex: args.regexp,
        };
        let probe = Probe::parse(&args.pattern, accepts).map_err(|e| usage(e.to_string()))?;
        if matches!(
            probe.target,
            common::probes::Target::Usdt { .. } | common::probes::Target::Tracepoint { .. }
        ) {
            return Err(usage(format!(
                "{}: funclatency times functions, from entry to return: a USDT probe or a \
                 tracepoint has no return (funccount counts them)",
                args.pattern
            )));
        }
        if args.hist.per_container {
            return Err(usage(
                "--per-container: funclatency keeps one histogram, or one per function (-F)",
            ));
        }
        Ok(Funclatency {
            args,
            probe,
            plan: Vec::new(),
            copies: Vec::new(),
        })
    }

    fn filters(&self) -> Filters {
        let pids = self.args.pid.map(|p| IdList(vec![p]));
        Filters::processes(&pids, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenFunclatencySkel<'_>, _: &Setup) -> Result<()> {
        self.plan = plan::plan(std::slice::from_ref(&self.probe), self.args.pid)?;
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.use_cookie = common::kernel::probe::attach_cookie();
        rodata.max_depth = self.args.level;
        rodata.unit_ns = match self.unit() {
            Unit::Msecs => 1_000_000,
            Unit::Usecs => 1000,
            _ => 1,
        };
        rodata.per_function = self.args.function;
        rodata.fine = self.args.hist.fine();
        rodata.placed_in_pid = plan::placed_in_pid(&self.plan, self.args.pid);
        for hooks in [ENTRIES, EXITS] {
            hooks.load_needed(open.open_object_mut(), &self.plan)?;
        }
        Ok(())
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        ENTRIES
            .target(&self.plan, program)
            .or_else(|| EXITS.target(&self.plan, program))
    }

    fn hook_notes(&self) -> Vec<String> {
        let mut notes = plan::describe(&self.plan);
        if !common::kernel::probe::attach_cookie() && self.plan.len() > 1 {
            notes.push(format!(
                "no attach cookies here: a copy of the programs for each of the {} \
                 functions, loaded as they attach",
                self.plan.len()
            ));
        }
        notes
    }

    fn attach(&mut self, skel: &mut FunclatencySkel<'_>) -> Result<Vec<Link>> {
        let pid = self.args.pid;
        if common::kernel::probe::attach_cookie() {
            return attach_points(skel, &self.plan, pid, 0);
        }
        // Without cookies: the object itself times the first function,
        // a copy of it each other.
        let all: Vec<usize> = (0..self.plan.len()).collect();
        let mut copies = Vec::new();
        let links = plan::attach_each(&self.plan, &all, |_, i| {
            let one = &self.plan[i..=i];
            if i == 0 {
                return attach_points(skel, one, pid, 0);
            }
            let copy = self.copy(skel, i)?;
            let l = attach_points(&copy, one, pid, i)?;
            copies.push(copy);
            Ok(l)
        });
        self.copies = copies;
        links
    }

    fn banner(&self) -> Banner {
        Banner::Note(format!(
            "Tracing {} functions for \"{}\"... Hit Ctrl-C to end.",
            self.plan.len(),
            self.args.pattern
        ))
    }

    fn schedule(&self) -> Schedule {
        let positional = &self.args.hist.interval;
        Schedule {
            interval: self
                .args
                .every
                .or(positional.interval)
                .map(Duration::from_secs),
            count: positional.count,
            duration: self.args.duration.map(Duration::from_secs),
        }
    }

    fn histograms(&self) -> Option<histogram::Spec<'_>> {
        Some(histogram::Spec {
            args: &self.args.hist,
            json: self.args.common.json,
            what: "funclatency, time per call",
            metric: "funclatency_call_time",
            help: "Time from a function's entry to its return",
            unit: self.unit(),
            timestamp: self.args.timestamp,
            // BCC's funclatency prints the average line under each.
            extension: true,
            layout: Layout::Log2,
        })
    }

    fn sections(&self, skel: &FunclatencySkel<'_>, drain: bool) -> Result<Vec<hist::Section>> {
        let fine = self.args.hist.fine_map(&skel.maps.fine_hists);
        let entries: Vec<histogram::Entry<u64, types::fl_hist, types::fine_hist>> =
            histogram::read_maps(&skel.maps.hists, fine, drain, |k| *k)?;
        Ok(entries
            .iter()
            .map(|e| {
                let h = &e.hist;
                let mut labels = serde_json::Map::new();
                let title = self.args.function.then(|| {
                    let name = self
                        .plan
                        .get(e.key as usize)
                        .map_or("[unknown]", |p| p.label.as_str());
                    labels.insert("function".into(), Value::from(name));
                    format!("Function = {name}")
                });
                hist::Section {
                    title,
                    labels,
                    slots: h.hist.slots.to_vec(),
                    count: h.hist.count,
                    total: h.hist.total,
                    ..Default::default()
                }
                .with_fine(
                    e.fine.as_ref().map(|f| &f.slots[..]),
                    self.args.hist.percentiles,
                )
            })
            .collect())
    }

    fn error_note(&self, index: u32) -> Option<&'static str> {
        use types::fl_error as E;
        Some(match E(index) {
            E::ERR_FL_UNMATCHED => {
                "returns not of the innermost call (a longjmp, an exception): that thread's calls \
                 in progress dropped"
            }
            E::ERR_FL_THREADS_FULL => "calls not timed: the map of threads' calls was full",
            _ => return None,
        })
    }
}
