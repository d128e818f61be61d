//! funccount: calls counted per probe point: the functions of a program or
//! library (uprobes; many as one uprobe_multi link), USDT probes,
//! tracepoints and kernel functions, matched by wildcards or a regular
//! expression. The kernel counts in a per-CPU array indexed by the point's
//! cookie (or with -P a per-CPU hash by process); each report prints what
//! the interval added, in BCC's layout.

mod info;

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Parser;
use common::cli::{self, CgroupLongArgs, CommonArgs, IdList, MetricsArgs};
use common::export::prom::Counters;
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kinds::event::{Cell, Column, Table};
use common::kinds::table::{self, Asked, Deltas, Timed};
use common::probes::plan::{self, Planned, Point};
use common::probes::{Accepts, Probe};
use common::run::lifecycle::{self, Banner, Schedule, Setup, Tool, When};
use common::run::process::Comms;
use common::usage::usage;
use libbpf_rs::skel::{OpenSkel, Skel};
use libbpf_rs::Link;

common::skeleton!("funccount");
use skel::{types, FunccountSkel, FunccountSkelBuilder, OpenFunccountSkel};

// SAFETY: repr(C) structs of integers and byte arrays (the generated
// skeleton types), valid for any bytes.
unsafe impl plain::Plain for types::fc_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::fc_pcount {}

const EXAMPLES: &str = "\
EXAMPLES:
    funccount 'c:malloc*'              # calls of libc's functions starting malloc
    funccount /usr/bin/app:'work_*'    # a program's functions, by name pattern
    funccount -r 'c:^(read|write)$'    # a regular expression
    funccount -p 181 c:malloc          # only process 181
    funccount u:/usr/bin/app:request   # a USDT probe's firings
    funccount 't:sched:sched_*'        # scheduler tracepoints
    funccount 'vfs_*'                  # kernel functions (needs kprobes)
    funccount -i 1 -d 10 c:free        # every second, for 10 seconds
    funccount -P c:malloc              # per process";

/// Count calls of functions, USDT probes and tracepoints.
#[derive(Parser, Debug)]
#[command(name = "funccount", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only this process: its uprobes and USDT probes are placed in it
    /// alone, and a library named without a path is found in its maps
    #[arg(short = 'p', long)]
    pid: Option<u32>,
    /// Print the counts every INTERVAL seconds
    #[arg(short = 'i', long, value_name = "INTERVAL", value_parser = common::cli::seconds)]
    interval: Option<u64>,
    /// Trace for DURATION seconds
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = common::cli::seconds)]
    duration: Option<u64>,
    /// Print the time above each report
    #[arg(short = 'T', long)]
    timestamp: bool,
    /// The patterns are regular expressions (else * and ? are wildcards)
    #[arg(short = 'r', long)]
    regexp: bool,
    /// Print each probe point before tracing: what it is, where it attaches
    /// and its cookie
    #[arg(short = 'D', long)]
    debug: bool,
    /// Count only calls made on this CPU
    #[arg(short = 'c', long, value_name = "CPU", value_parser = cli::cpu)]
    cpu: Option<u32>,
    /// Count by process as well: PID, COMM, FUNC, COUNT
    #[arg(short = 'P', long, conflicts_with_all = ["prometheus", "prom_file"])]
    process: bool,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    metrics: MetricsArgs,
    #[command(flatten)]
    common: CommonArgs,
    /// What to count: [p:]LIB:FUNC (a program or library's functions),
    /// u:LIB[:PROVIDER]:PROBE (USDT), t:CATEGORY:EVENT (tracepoints), or
    /// FUNC (kernel functions); * and ? match any text and any character
    #[arg(value_name = "PATTERN", required = true)]
    patterns: Vec<String>,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Funccount>();

pub(crate) struct Funccount {
    args: Args,
    probes: Vec<Probe>,
    /// The points, resolved once privileged (tracefs, the kernel's
    /// features), before load.
    plan: Vec<Planned>,
    /// Totals at the last report, to print what each interval added: by
    /// (process or 0, point).
    deltas: Deltas<(u32, u32), u64>,
    table: Table<Timed<Row>>,
    comms: Comms,
    /// No attach cookies here (5.10-5.14): each point but the first (and
    /// the USDT probes) is served by a copy of the object of its own,
    /// sharing the first's maps, as BCC loads a program per probe.
    copies: Vec<FunccountSkel<'static>>,
}

/// Whether probes get their index as their attach cookie here (5.15+).
fn cookies() -> bool {
    common::kernel::probe::attach_cookie()
}

/// The points served by an object of their own where there are no
/// cookies: all but the USDT probes and system calls (their programs find
/// their point by other means).
fn lone_points(plan: &[Planned]) -> Vec<usize> {
    (0..plan.len())
        .filter(|i| !plan[*i].point.is_usdt() && !plan[*i].point.is_syscall())
        .collect()
}

/// Its programs for each kind of point.
const HOOKS: plan::Hooks = plan::Hooks {
    uprobe: "fc_uprobe",
    uprobe_multi: "fc_umulti",
    usdt: "fc_usdt",
    tracepoint: "fc_tp",
    kprobe: "fc_kprobe",
    kprobe_multi: "fc_kmulti",
    sys_enter: "fc_sys_enter",
    sys_exit: "fc_sys_exit",
};

impl Funccount {
    /// A copy of the loaded object `main` that serves point `i` alone:
    /// the same settings, `main`'s maps, only the program `i` needs.
    fn copy(&self, main: &FunccountSkel<'_>, i: usize) -> Result<FunccountSkel<'static>> {
        let settings = main
            .maps
            .rodata_data
            .copied()
            .context("the BPF object has no read-only data")?;
        let one = std::slice::from_ref(&self.plan[i]);
        maps::load_copy::<FunccountSkelBuilder>(main.object(), |open| {
            let rodata = maps::rodata(&mut open.maps.rodata_data)?;
            *rodata = settings;
            rodata.lone_point = i as u32;
            open.maps.calls.set_max_entries(self.plan.len() as u32)?;
            HOOKS.load_needed(open.open_object_mut(), one)
        })
        .with_context(|| format!("the program for {}", self.plan[i].label))
    }
}

impl Tool for Funccount {
    common::tool_types!(FunccountSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        let accepts = Accepts {
            returns: false,
            patterns: true,
            regex: args.regexp,
        };
        let probes = args
            .patterns
            .iter()
            .map(|p| Probe::parse(p, accepts).map_err(|e| usage(e.to_string())))
            .collect::<Result<Vec<_>>>()?;
        Ok(Funccount {
            table: table(&args),
            args,
            probes,
            plan: Vec::new(),
            deltas: Deltas::default(),
            comms: Comms::default(),
            copies: Vec::new(),
        })
    }

    fn filters(&self) -> Filters {
        let pids = self.args.pid.map(|p| IdList(vec![p]));
        Filters::processes(&pids, self.args.cgroup.path())
    }

    fn configure(&mut self, open: &mut OpenFunccountSkel<'_>, _: &Setup) -> Result<()> {
        let serving = plan::Serving {
            whole_frames: false,
            raw_syscalls: true,
        };
        self.plan = plan::plan_with(&self.probes, self.args.pid, serving)?;
        if self.args.debug {
            for (i, p) in self.plan.iter().enumerate() {
                eprintln!("{i:>5} {:<36} {}", p.label, where_(&p.point));
            }
        }
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.per_process = self.args.process;
        rodata.only_cpu = self.args.cpu.map_or(-1, |c| c as i32);
        rodata.placed_in_pid = plan::placed_in_pid(&self.plan, self.args.pid);
        rodata.use_cookie = cookies();
        rodata.lone_point = lone_points(&self.plan).first().copied().unwrap_or(0) as u32;
        let points = self.plan.len() as u32;
        open.maps.calls.set_max_entries(points.max(1))?;
        HOOKS.load_needed(open.open_object_mut(), &self.plan)
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        HOOKS.target(&self.plan, program)
    }

    fn hook_notes(&self) -> Vec<String> {
        let mut notes = plan::describe(&self.plan);
        let lone = lone_points(&self.plan).len();
        if !cookies() && lone > 1 {
            notes.push(format!(
                "no attach cookies here: a copy of the program for each of the {lone} \
                 functions and tracepoints, loaded as it attaches"
            ));
        }
        notes
    }

    fn attach(&mut self, skel: &mut FunccountSkel<'_>) -> Result<Vec<Link>> {
        let (obj, pid) = (skel.object(), self.args.pid);
        if cookies() {
            return HOOKS.attach_at(obj, &self.plan, pid, true, 0);
        }
        // USDT probes carry their index in libbpf's spec, system calls
        // theirs in a map; every other point has a copy of the object (the
        // first, the object itself).
        let mut links = HOOKS.attach_syscalls(obj, &self.plan)?;
        for (i, p) in self.plan.iter().enumerate() {
            if p.point.is_usdt() {
                let one = std::slice::from_ref(p);
                links.extend(HOOKS.attach_at(obj, one, pid, false, i)?);
            }
        }
        let lone = lone_points(&self.plan);
        let mut copies = Vec::new();
        let attached = plan::attach_each(&self.plan, &lone, |n, i| {
            let one = std::slice::from_ref(&self.plan[i]);
            if n == 0 {
                return HOOKS.attach_at(obj, one, pid, false, i);
            }
            let copy = self.copy(skel, i)?;
            let l = HOOKS.attach_at(copy.object(), one, pid, false, i)?;
            copies.push(copy);
            Ok(l)
        });
        self.copies = copies;
        links.extend(attached?);
        Ok(links)
    }

    fn banner(&self) -> Banner {
        Banner::Note(format!(
            "Tracing {} functions for \"{}\"... Hit Ctrl-C to end.",
            self.plan.len(),
            self.args.patterns.join(" ")
        ))
    }

    fn interval_table(&self) -> Option<table::Spec<'_>> {
        Some(table::Spec {
            json: self.args.common.json,
            heading: if self.args.timestamp {
                table::Heading::Time
            } else {
                table::Heading::Nothing
            },
            clear: false,
            max: usize::MAX,
            schedule: Schedule {
                interval: self.args.interval.map(Duration::from_secs),
                count: None,
                duration: self.args.duration.map(Duration::from_secs),
            },
            last_line: Some("Detaching..."),
            banner: None,
            metrics: Some(&self.args.metrics),
        })
    }

    fn interval_metrics(&mut self, skel: &FunccountSkel<'_>, asked: Asked) -> Result<Counters> {
        // -P has no metrics: its totals are by process.
        if asked == Asked::AfterRows {
            return Ok(metrics(&self.plan, self.deltas.totals()));
        }
        Ok(metrics(&self.plan, &per_point(skel, self.plan.len())?))
    }

    fn interval_rows<'s>(
        &'s mut self,
        skel: &FunccountSkel<'_>,
        _: When,
    ) -> Result<Box<dyn table::Print + 's>> {
        let totals = if self.args.process {
            per_process(skel, &mut self.comms)?
        } else {
            per_point(skel, self.plan.len())?
        };
        let rows = self
            .deltas
            .added(totals)
            .into_iter()
            .map(|((pid, point), count)| Row {
                pid,
                point,
                count,
                func: label(&self.plan, point).to_string(),
                comm: self.comms.raw(pid).to_vec(),
            })
            .collect();
        // BCC's order: the fewest calls first, so the most are nearest the
        // prompt.
        Ok(Box::new(table::Rows::new(rows, &self.table, |a, b| {
            (a.count, a.pid, a.point).cmp(&(b.count, b.pid, b.point))
        })))
    }

    fn error_note(&self, index: u32) -> Option<&'static str> {
        use types::fc_error as E;
        Some(match E(index) {
            E::ERR_FC_FULL => "calls not counted: the per-process map was full",
            _ => return None,
        })
    }
}

/// What -D says of a point.
fn where_(point: &Point) -> String {
    match point {
        Point::Uprobe { path, offset } => format!("uprobe {}+{offset:#x}", path.display()),
        Point::Usdt {
            path,
            provider,
            name,
        } => format!("usdt {}:{provider}:{name}", path.display()),
        Point::Tracepoint {
            category,
            event,
            id,
        } => {
            format!("tracepoint {category}:{event} (event id {id})")
        }
        Point::Kernel { func } => format!("kprobe {func}"),
        Point::Syscall { event, exit, nr } => {
            let raw = if *exit { "sys_exit" } else { "sys_enter" };
            format!("raw tracepoint {raw}, call {nr} (syscalls:{event})")
        }
    }
}

/// A point's calls in the interval (by a process with -P).
struct Row {
    pid: u32,
    point: u32,
    count: u64,
    func: String,
    /// The process's name (raw), with -P.
    comm: Vec<u8>,
}

/// BCC's columns: FUNC COUNT, with -P PID COMM first.
fn table(args: &Args) -> Table<Timed<Row>> {
    let t = table::timed::<Row>(args.common.json);
    let t = if args.process {
        t.columns([
            Column::new("PID", 7, "pid", |t| t.row.pid.into()),
            Column::new("COMM", 16, "comm", |t| Cell::bytes(&t.row.comm)),
        ])
    } else {
        t
    };
    t.columns([
        Column::new("FUNC", 36, "func", |t| t.row.func.as_str().into()),
        Column::right("COUNT", 8, "count", |t| t.row.count.into()),
    ])
}

/// How the report names point `point`.
fn label(plan: &[Planned], point: u32) -> &str {
    plan.get(point as usize)
        .map_or("[unknown]", |p| p.label.as_str())
}

/// `funccount_calls_total{func="malloc"}`.
fn metrics(plan: &[Planned], totals: &HashMap<(u32, u32), u64>) -> Counters {
    let mut calls: Vec<(u32, u64)> = totals.iter().map(|((_, p), n)| (*p, *n)).collect();
    calls.sort();
    Counters {
        families: vec![(
            "funccount_calls",
            "Calls counted, by probe point",
            calls
                .iter()
                .map(|(p, n)| (vec![("func".to_string(), label(plan, *p).to_string())], *n))
                .collect(),
        )],
    }
}

/// Every point's calls, summed over the CPUs, by (0, point).
fn per_point(skel: &FunccountSkel<'_>, points: usize) -> Result<HashMap<(u32, u32), u64>> {
    let map = &skel.maps.calls;
    let mut totals = HashMap::new();
    for i in 0..points as u32 {
        let n = maps::percpu_sum_at(map, i)?;
        if n > 0 {
            totals.insert((0, i), n);
        }
    }
    Ok(totals)
}

/// Every process's calls of each point, summed over the CPUs; their
/// names kept.
fn per_process(skel: &FunccountSkel<'_>, comms: &mut Comms) -> Result<HashMap<(u32, u32), u64>> {
    let rows = comms.read_percpu(
        &skel.maps.by_process,
        |k: &types::fc_key| k.tgid,
        |p: &types::fc_pcount| (p.count, &p.comm[..]),
        |n: &mut u64, p: &types::fc_pcount| *n += p.count,
    )?;
    Ok(rows
        .into_iter()
        .map(|(k, n)| ((k.tgid, k.probe), n))
        .collect())
}
