//! argdist: histograms (-H) and frequency counts (-C) of the values of
//! probes' arguments, return values, latencies and tracepoint fields, every
//! interval: BCC's argdist, on trace's kernel side (bpf/trace.bpf.c). The
//! kernel makes the filter's comparisons with constants and reads what the
//! expressions name; the values are keyed and counted here.

mod info;
pub mod spec;

use std::collections::HashMap;
use std::io::{self, Write};
use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use common::cli::{CgroupLongArgs, CommonArgs};
use common::kernel::filters::Filters;
use common::kinds::event::Record;
use common::output::hist::{log2_slot, print_log2, to_json};
use common::output::Out;
use common::probes::expr::Value;
use common::probes::hits::{self, Points, Settings};
use common::probes::skel::{types, OpenTraceSkel, TraceSkel, TraceSkelBuilder};
use common::run::lifecycle::{self, Schedule, Setup, Tool, When};
use common::usage::usage;
use libbpf_rs::Link;
use serde_json::{json, Value as Json};

use spec::{ArgProbe, Mode, Type};

const EXAMPLES: &str = "\
EXAMPLES:
    argdist -H 'p:c:malloc(size_t size):size_t:size'     # allocation sizes
    argdist -p 1005 -C 'p:c:malloc(size_t size):size_t:size:size==16'
    argdist -C 'r:c:gets():char*:$retval#snooped strings'
    argdist -p 1005 -C 'p:c:write(int fd):int:fd' -T 5   # the 5 busiest fds
    argdist -p 1005 -H 'r:c:read()'                       # read()'s results
    argdist -H 'r:/usr/bin/app:handle():u64:$latency'    # its time, in ns
    argdist -C 'r::__vfs_read():u32:$PID:$latency > 100000'   # kprobes
    argdist -H 't:block:block_rq_complete():u32:args->nr_sector'
    argdist -C 't:irq:irq_handler_entry():int:args->irq'
    argdist -C 'u:/usr/bin/app:request():u64:arg1'       # a USDT probe";

/// Count or histogram the values of functions' arguments and return values.
#[derive(Parser, Debug)]
#[command(name = "argdist", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Only this process
    #[arg(short = 'p', long, conflicts_with = "tid")]
    pid: Option<u32>,
    /// Only this thread
    #[arg(short = 't', long)]
    tid: Option<u32>,
    /// Bytes read of each string (at most 256)
    #[arg(short = 'z', long, default_value_t = 80,
          value_parser = clap::value_parser!(u32).range(1..=256))]
    string_size: u32,
    /// Print every INTERVAL seconds
    #[arg(short = 'i', long, default_value_t = 1, value_parser = common::cli::seconds)]
    interval: u64,
    /// Trace for DURATION seconds
    #[arg(short = 'd', long, value_parser = common::cli::seconds)]
    duration: Option<u64>,
    /// Print this many times, then exit
    #[arg(short = 'n', long = "number", value_name = "COUNT",
          value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
    /// Keep counting across intervals (else each interval's own)
    #[arg(short = 'c', long)]
    cumulative: bool,
    /// Only the TOP most frequent values of each count (-C)
    #[arg(short = 'T', long, value_parser = clap::value_parser!(u64).range(1..))]
    top: Option<u64>,
    /// A histogram of a probe's value: TYPE:LIB:FUNC(SIGNATURE):TYPE:EXPR[:FILTER][#LABEL]
    #[arg(short = 'H', long = "histogram", value_name = "SPECIFIER")]
    histogram: Vec<String>,
    /// Counts of a probe's values: TYPE:LIB:FUNC(SIGNATURE)[:TYPES:EXPRS[:FILTER]][#LABEL]
    #[arg(short = 'C', long = "count", value_name = "SPECIFIER")]
    counts: Vec<String>,
    /// Accepted as BCC's and ignored: types come from the specifier's
    /// signature and types, and tracepoints' formats
    #[arg(short = 'I', long, value_name = "HEADER")]
    include: Vec<String>,
    #[command(flatten)]
    cgroup: CgroupLongArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Argdist>();

/// A key's part: an integer or a string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Part {
    Int(i64),
    Str(Vec<u8>),
}

/// What one probe has seen this interval (or since the start, -c).
#[derive(Default)]
struct Seen {
    counts: HashMap<Vec<Part>, u64>,
    slots: Vec<u32>,
    total: u64,
}

pub(crate) struct Argdist {
    args: Args,
    probes: Vec<ArgProbe>,
    points: Points,
    event: Record<types::tr_event>,
    seen: Vec<Seen>,
}

impl Argdist {
    fn texts(args: &Args) -> Vec<(String, Mode)> {
        // BCC's order: the counts, then the histograms.
        let c = args.counts.iter().map(|t| (t.clone(), Mode::Count));
        let h = args.histogram.iter().map(|t| (t.clone(), Mode::Hist));
        c.chain(h).collect()
    }

    fn parse(args: &Args, strict: bool) -> Result<Vec<ArgProbe>> {
        hits::parse_all(&Self::texts(args), strict, |(t, m), fields| {
            let mut p = ArgProbe::parse(t, *m, fields)?;
            p.probe.agg = in_kernel(&p);
            Ok(p)
        })
    }

    fn trace_probes(&self) -> Vec<common::probes::spec::TraceProbe> {
        self.probes.iter().map(|p| p.probe.clone()).collect()
    }

    /// A value of the current hit, as its type keeps it.
    fn part(&self, p: &ArgProbe, i: usize) -> Part {
        let size = self.args.string_size as usize;
        match hits::eval(&p.probe, &p.probe.values[i], &self.event, size) {
            Value::Str(s) => Part::Str(s.to_vec()),
            Value::Int(v) => match p.types[i] {
                Type::Int(t) => Part::Int(t.apply(v)),
                Type::Str => Part::Int(v),
            },
        }
    }

    fn key_text(p: &ArgProbe, key: &[Part]) -> String {
        let show = |v: &Part| match v {
            Part::Int(i) => i.to_string(),
            // From the traced program: escaped, as every tool's text.
            Part::Str(s) => common::output::escape(s).into_owned(),
        };
        if p.default {
            return if p.probe.probe.at == common::probes::At::Return {
                format!("retval = {}", show(&key[0]))
            } else {
                "total calls".into()
            };
        }
        p.exprs
            .iter()
            .zip(key)
            .map(|(e, v)| format!("{e} = {}", show(v)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The counts of probe `i`, fewest first (the TOP most with -T).
    fn sorted(&self, i: usize) -> Vec<(&Vec<Part>, u64)> {
        let mut rows: Vec<(&Vec<Part>, u64)> =
            self.seen[i].counts.iter().map(|(k, v)| (k, *v)).collect();
        // Fewest first; equal counts by their values.
        rows.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(b.0)));
        if let Some(top) = self.args.top {
            let skip = rows.len().saturating_sub(top as usize);
            rows.drain(..skip);
        }
        rows
    }

    /// Adds what the kernel counted since the last report.
    fn drain_kernel(&mut self, skel: &TraceSkel<'_>) -> Result<()> {
        if !self.probes.iter().any(|p| p.probe.agg.is_some()) {
            return Ok(());
        }
        let entries: Vec<(types::tr_agg_key, Box<types::tr_agg>)> =
            common::kernel::maps::drain_as(&skel.maps.aggs)?;
        for (k, v) in entries {
            let Some(&i) = self.points.of_point.get(k.point as usize) else {
                continue;
            };
            let p = &self.probes[i];
            let s = &mut self.seen[i];
            match p.mode {
                Mode::Hist => {
                    if s.slots.len() < 64 {
                        s.slots.resize(64, 0);
                    }
                    let slot = (k.vals[0] as usize).min(63);
                    s.slots[slot] = s.slots[slot].saturating_add(v.count as u32);
                    s.total = s.total.wrapping_add(v.total);
                }
                Mode::Count => {
                    let key: Vec<Part> =
                        if p.default && p.probe.probe.at != common::probes::At::Return {
                            vec![Part::Int(1)]
                        } else {
                            p.types
                                .iter()
                                .zip(k.vals)
                                .map(|(t, v)| match t {
                                    Type::Int(t) => Part::Int(t.apply(v)),
                                    Type::Str => Part::Int(v),
                                })
                                .collect()
                        };
                    *s.counts.entry(key).or_default() += v.count;
                }
            }
        }
        Ok(())
    }

    fn print_text(&self, out: &mut Out) -> io::Result<()> {
        writeln!(out, "[{}]", common::output::now_hms())?;
        for (i, p) in self.probes.iter().enumerate() {
            match p.mode {
                Mode::Count => {
                    writeln!(out, "{}", p.title())?;
                    writeln!(out, "\t{:<10} EVENT", "COUNT")?;
                    for (key, n) in self.sorted(i) {
                        writeln!(out, "\t{:<10} {}", n, Self::key_text(p, key))?;
                    }
                }
                Mode::Hist => print_log2(out, &self.seen[i].slots, hist_label(p))?,
            }
        }
        Ok(())
    }

    fn print_json(&self, out: &mut Out) -> io::Result<()> {
        let time = common::output::now_hms();
        for (i, p) in self.probes.iter().enumerate() {
            let mut o = serde_json::Map::new();
            o.insert("time".into(), json!(time));
            o.insert("probe".into(), json!(p.title()));
            if p.mode == Mode::Hist {
                // As every histogram tool's: the unit (the text's label),
                // count, total and buckets with low, high and count.
                let s = &self.seen[i];
                let count: u64 = s.slots.iter().map(|c| u64::from(*c)).sum();
                o.insert("type".into(), json!("histogram"));
                o.insert("value".into(), json!(p.exprs[0]));
                let unit = hist_label(p);
                out.json(&to_json(o, unit, &s.slots, count, s.total, None))?;
                continue;
            }
            let rows: Vec<Json> = self
                .sorted(i)
                .into_iter()
                .map(|(key, n)| {
                    let values: serde_json::Map<String, Json> = p
                        .exprs
                        .iter()
                        .zip(key)
                        .map(|(e, v)| {
                            let v = match v {
                                Part::Int(i) => json!(i),
                                Part::Str(s) => json!(String::from_utf8_lossy(s)),
                            };
                            (e.clone(), v)
                        })
                        .collect();
                    json!({ "values": values, "count": n })
                })
                .collect();
            o.insert("type".into(), json!("count"));
            o.insert("counts".into(), json!(rows));
            out.json(&Json::Object(o))?;
        }
        Ok(())
    }
}

/// What a histogram's values are called: its label, else its expression
/// (BCC's header of the value column).
fn hist_label(p: &ArgProbe) -> &str {
    match &p.label {
        Some(l) => l,
        None if p.default => "retval",
        None => &p.exprs[0],
    }
}

/// What the kernel can count of a probe: its values when each is an
/// integer the kernel reads (an operand, maybe cast) and its whole filter
/// is the kernel's; else None (each hit is sent and counted here).
fn in_kernel(p: &ArgProbe) -> Option<common::probes::spec::Agg> {
    if !p.probe.filter_in_kernel || p.exprs.len() > common::probes::limits::AGG_VALS {
        return None;
    }
    // "total calls": one key, with no values.
    let counts_calls = p.default && p.probe.probe.at != common::probes::At::Return;
    let mut values = Vec::new();
    for (e, t) in p.probe.values.iter().zip(&p.types) {
        if counts_calls {
            break;
        }
        let Type::Int(kept) = t else { return None };
        let (op, own) = p.probe.kvalue(e)?;
        values.push((op, own, *kept));
    }
    Some(common::probes::spec::Agg {
        hist: p.mode == Mode::Hist,
        values,
    })
}

impl Tool for Argdist {
    type Args = Args;
    type Builder = TraceSkelBuilder;
    const INFO: &'static lifecycle::ToolInfo = &info::INFO;

    fn new(args: Args) -> Result<Self> {
        if args.histogram.is_empty() && args.counts.is_empty() {
            return Err(usage("at least one specifier (-H or -C) is required"));
        }
        // Tracepoints' fields are checked here where tracefs can be read,
        // else once privileged (configure).
        let probes = Self::parse(&args, false)?;
        Ok(Argdist {
            seen: probes.iter().map(|_| Seen::default()).collect(),
            probes,
            points: Points::default(),
            event: Record::new(false),
            args,
        })
    }

    fn filters(&self) -> Filters {
        Filters {
            pids: self.args.pid.map(|p| vec![p]),
            tids: self.args.tid.map(|t| vec![t]),
            thread_option: Some("-t"),
            cgroup: self.args.cgroup.path(),
            ..Filters::default()
        }
    }

    fn configure(&mut self, open: &mut OpenTraceSkel<'_>, _: &Setup) -> Result<()> {
        self.probes = Self::parse(&self.args, true)?;
        let probes = self.trace_probes();
        self.points = Points::plan(&probes, self.args.pid, false)?;
        let settings = Settings {
            pid: self.args.pid,
            include_self: false,
            str_size: self.args.string_size,
            kernel_stack: false,
            user_stack: false,
            buffer_pages: 64,
        };
        self.points.configure(open, &probes, &settings)
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        self.points.hook_target(program)
    }

    fn hook_notes(&self) -> Vec<String> {
        self.points.notes(&self.trace_probes())
    }

    fn loaded(&mut self, skel: &mut TraceSkel<'_>) -> Result<()> {
        self.points.load(skel, &self.trace_probes())
    }

    fn attach(&mut self, skel: &mut TraceSkel<'_>) -> Result<Vec<Link>> {
        self.points.attach(skel, self.args.pid)
    }

    fn banner(&self) -> lifecycle::Banner {
        lifecycle::Banner::Note(format!(
            "Tracing {} probes... Hit Ctrl-C to end.",
            self.probes.len()
        ))
    }

    fn schedule(&self) -> Schedule {
        Schedule {
            interval: Some(Duration::from_secs(self.args.interval)),
            count: self.args.count,
            duration: self.args.duration.map(Duration::from_secs),
        }
    }

    fn event(&mut self, data: &[u8], _: &mut Out) -> io::Result<()> {
        self.event.read(data);
        common::probes::hits::fill_missed(&mut self.event, self.args.string_size as usize);
        let Some(&i) = self.points.of_point.get(self.event.probe as usize) else {
            return Ok(());
        };
        let p = &self.probes[i];
        if !hits::passes(&p.probe, &self.event, self.args.string_size as usize) {
            return Ok(());
        }
        match p.mode {
            Mode::Count => {
                let key: Vec<Part> = (0..p.exprs.len()).map(|j| self.part(p, j)).collect();
                *self.seen[i].counts.entry(key).or_default() += 1;
            }
            Mode::Hist => {
                let v = match self.part(p, 0) {
                    Part::Int(v) => v as u64,
                    Part::Str(_) => 0,
                };
                let s = &mut self.seen[i];
                if s.slots.len() < 64 {
                    s.slots.resize(64, 0);
                }
                s.slots[log2_slot(v)] += 1;
                s.total = s.total.wrapping_add(v);
            }
        }
        Ok(())
    }

    fn report(&mut self, skel: &TraceSkel<'_>, out: &mut Out, when: When) -> Result<()> {
        let _ = when;
        self.drain_kernel(skel)?;
        if self.args.common.json {
            self.print_json(out)?;
        } else {
            self.print_text(out)?;
        }
        if !self.args.cumulative {
            self.seen.iter_mut().for_each(|s| *s = Seen::default());
        }
        Ok(())
    }
}
