//! trace: a line per hit of each probe (user functions and their returns,
//! USDT probes, tracepoints, kernel functions), with a message formatted
//! from its arguments, return value or fields, and an optional filter: BCC's
//! trace, with its probe syntax, where no compiler runs at trace time. The
//! kernel side reads what the formats and filters name (arguments, the
//! record, strings where they point, stacks); comparisons with constants
//! are made there, the rest of a filter here.

mod info;
pub mod spec;

use std::collections::HashMap;
use std::io::{self, Write};
use std::rc::Rc;

use anyhow::{Context as _, Result};
use clap::Parser;
use common::cli::{CgroupArgs, CommonArgs, ContainerArgs, IdList};
use common::kernel::filters::Filters;
use common::kernel::maps;
use common::kernel::probe::{self as kprobe, load_when};
use common::kinds::event::{columns, Cell, Column, Record, Stamped, Table};
use common::output::Out;
use common::probes::expr::{self, Expr, IntType, Value};
use common::probes::plan::{self, Planned, Point, Programs};
use common::probes::tracepoints::{self, FieldKind};
use common::probes::{At, Target};
use common::run::lifecycle::{self, Setup, Tool, When};
use common::sym::{trim_tracing_frames, Frame, Symbolizer};
use common::usage::usage;
use libbpf_rs::{Link, MapCore};

use spec::{Cmp, Conv, Operand, Piece, TraceProbe};

common::skeleton!("trace");
use skel::{types, OpenTraceSkel, TraceSkel, TraceSkelBuilder};

common::event_record!(types::tr_event, types::task_header);
// SAFETY: a repr(C) struct of integers (the generated skeleton type).
unsafe impl plain::Plain for types::tr_probe {}

/// bpf/trace.h's limits.
pub(crate) const STRS: usize = 6;
pub(crate) const STR_MAX: u32 = 256;
pub(crate) const RECORD_MAX: usize = 256;
const TERMS: usize = 4;
const STACK_DEPTH: u32 = 127;

const EXAMPLES: &str = "\
EXAMPLES:
    trace 'c:malloc \"size = %d\", arg1'            # each malloc() and its size
    trace 'c:open (arg2 == 42) \"%s %d\", arg1, arg2'  # opens with flags 42
    trace 'r:c:malloc (retval) \"allocated = %x\", retval'
    trace 'p:c:write(int fd, char *buf, size_t n) (fd == 1) \"%d bytes\", n'
    trace 't:syscalls:sys_enter_openat \"%s\", args->filename'
    trace 'u:/usr/bin/app:request__start \"%d\", arg1'   # a USDT probe
    trace -p 181 -U 'c:free'                   # with the user stack of each
    trace 'r::do_sys_openat2 \"%d\", retval'     # a kernel function (kprobes)
    trace -M 10 -t 'c:malloc' 'c:free'           # two probes, 10 lines, times
    trace 'c:open (STRCMP(\"/etc/passwd\", arg1))'   # a string filter";

/// Trace calls and events, a line each, with a formatted message.
#[derive(Parser, Debug)]
#[command(name = "trace", version, after_help = EXAMPLES)]
pub(crate) struct Args {
    /// Pages of the event buffer per CPU (the ring's size is their total)
    #[arg(short = 'b', long, value_name = "PAGES", default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(1..=65536))]
    buffer_pages: u32,
    /// Only this process
    #[arg(short = 'p', long, conflicts_with = "tid")]
    pid: Option<u32>,
    /// Only this thread
    #[arg(short = 'L', long)]
    tid: Option<u32>,
    /// Only this user id
    #[arg(long)]
    uid: Option<u32>,
    /// Bytes read of each string (at most 256)
    #[arg(short = 'Z', long, value_name = "STRING_SIZE", default_value_t = 80,
          value_parser = clap::value_parser!(u32).range(1..=256))]
    string_size: u32,
    /// Trace this tool's own process too
    #[arg(short = 'S', long)]
    include_self: bool,
    /// Exit after this many lines
    #[arg(short = 'M', long, value_name = "MAX_EVENTS",
          value_parser = clap::value_parser!(u64).range(1..))]
    max_events: Option<u64>,
    /// Print a TIME column: seconds since tracing started
    #[arg(short = 't', long)]
    timestamp: bool,
    /// With -t: seconds since the epoch
    #[arg(short = 'u', long, requires = "timestamp")]
    unix_timestamp: bool,
    /// Print a TIME column: the time of day (HH:MM:SS)
    #[arg(short = 'T', long)]
    time: bool,
    /// Print a CPU column
    #[arg(short = 'C', long, visible_alias = "print_cpu")]
    print_cpu: bool,
    #[command(flatten)]
    cgroup: CgroupArgs,
    /// Only processes whose name contains NAME
    #[arg(short = 'n', long)]
    name: Option<String>,
    /// Only lines whose message contains MSG_FILTER
    #[arg(short = 'f', long, value_name = "MSG_FILTER")]
    msg_filter: Option<String>,
    /// Accepted as BCC's (STRCMP compares bytes, so binary values too)
    #[arg(short = 'B', long, visible_alias = "bin_cmp")]
    bin_cmp: bool,
    /// Accepted as BCC's: symbols are found through each process's maps
    #[arg(
        short = 's',
        long,
        visible_alias = "sym_file_list",
        value_name = "SYM_FILE_LIST"
    )]
    sym_file_list: Option<String>,
    /// Print the kernel stack of each hit
    #[arg(short = 'K', long)]
    kernel_stack: bool,
    /// Print the user stack of each hit (frame pointers)
    #[arg(short = 'U', long)]
    user_stack: bool,
    /// Print each frame's address in stacks
    #[arg(short = 'a', long)]
    address: bool,
    /// Accepted as BCC's and ignored: types come from the signature and
    /// the tracepoint's format
    #[arg(short = 'I', long, value_name = "HEADER")]
    include: Vec<String>,
    /// Count identical lines and print them with their counts at the end
    /// (needs -M)
    #[arg(short = 'A', long, requires = "max_events")]
    aggregate: bool,
    #[command(flatten)]
    containers: ContainerArgs,
    /// PROBE [(SIGNATURE)] [(FILTER)] ["FORMAT"[, VALUES]]: PROBE is
    /// [p:|r:]LIB:FUNC, u:LIB:PROBE, t:CATEGORY:EVENT, FUNC or r::FUNC
    #[arg(value_name = "PROBE", required = true)]
    probes: Vec<String>,
    #[command(flatten)]
    common: CommonArgs,
}

pub const ENTRY: lifecycle::Entry = lifecycle::Entry::of::<Trace>();

pub(crate) struct Trace {
    args: Args,
    probes: Vec<TraceProbe>,
    /// Points, and the probe each serves.
    plan: Vec<Planned>,
    of_point: Vec<usize>,
    /// Per probe: whether the kernel makes its whole filter.
    kernel_filter: Vec<bool>,
    use_cookie: bool,
    event: Record<types::tr_event>,
    table: Table<Trace>,
    symbolizer: Symbolizer,
    /// The current hit's message and stacks.
    message: String,
    func: String,
    kstack: Vec<String>,
    ustack: Vec<String>,
    printed: u64,
    /// -A: each line (with its stacks) and its count, in first-seen order.
    aggregated: Vec<(String, u64)>,
    seen: HashMap<String, usize>,
}

fn str_slot(e: &types::tr_event, slot: usize, size: usize) -> &[u8] {
    let start = slot * size;
    let bytes = e.strs.get(start..start + size).unwrap_or(&[]);
    // SAFETY: i8 and u8 have the same layout.
    let bytes: &[u8] = unsafe { &*(bytes as *const [i8] as *const [u8]) };
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

impl Trace {
    /// The value `e` (a name or member of probe `p`) has in the current hit;
    /// `string`: read as a string.
    fn value<'a>(&'a self, p: &'a TraceProbe, e: &Expr) -> Value<'a> {
        let col = match e {
            Expr::Name(_, c) | Expr::Member(_, _, c) => *c,
            _ => return Value::Int(0),
        };
        let ev = &*self.event;
        let Some(op) = p.operand(col) else {
            return Value::Int(0);
        };
        if p.string_cols.contains(&col) {
            if let Operand::Field(f) = op {
                if f.kind == FieldKind::Chars {
                    let start = (f.offset as usize).min(RECORD_MAX);
                    let end = (start + f.size as usize).min(ev.record_bytes as usize);
                    let b = ev.record.get(start..end.max(start)).unwrap_or(&[]);
                    let n = b.iter().position(|c| *c == 0).unwrap_or(b.len());
                    return Value::Str(&b[..n]);
                }
            }
            let slot = p.strings.iter().position(|s| s == op).unwrap_or(0);
            return Value::Str(str_slot(ev, slot, self.args.string_size as usize));
        }
        let h = self.event.stamps().head();
        Value::Int(match op {
            Operand::Arg(i, t) => t.apply(ev.args[*i as usize] as i64),
            Operand::Retval(t) => t.apply(ev.retval as i64),
            Operand::Field(f) => {
                let start = f.offset as usize;
                let size = (f.size as usize).min(8);
                let mut raw = [0u8; 8];
                if let Some(b) = ev.record.get(start..start + size) {
                    raw[..size].copy_from_slice(b);
                }
                IntType {
                    size: size as u8,
                    signed: f.signed,
                }
                .apply(i64::from_le_bytes(raw))
            }
            Operand::Tid => h.tid.into(),
            Operand::Tgid => h.pid.into(),
            Operand::Uid => ev.uid.into(),
            Operand::Gid => ev.gid.into(),
            Operand::Cpu => ev.cpu.into(),
        })
    }

    fn eval<'a>(&'a self, p: &'a TraceProbe, e: &'a Expr) -> Value<'a> {
        expr::eval(e, &|n| self.value(p, n))
    }

    /// The message of the current hit of `p`.
    fn format(&mut self, p: &TraceProbe) -> String {
        let mut out = String::new();
        let mut values = p.values.iter();
        for piece in &p.format {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Conv(c) => {
                    let Some(v) = values.next() else { break };
                    let text = match self.eval(p, v) {
                        Value::Str(s) if c.conv == 's' => String::from_utf8_lossy(s).into_owned(),
                        v => {
                            let v = v.int();
                            match c.conv {
                                'K' => self.ksym(v as u64),
                                'U' => self.usym(v as u64),
                                _ => convert(c, v),
                            }
                        }
                    };
                    pad(&mut out, c, &text);
                }
            }
        }
        out
    }

    fn ksym(&mut self, addr: u64) -> String {
        self.symbolizer
            .kernel(&[addr])
            .first()
            .map_or_else(|| format!("{addr:#x}"), |f| f.label(true))
    }

    fn usym(&mut self, addr: u64) -> String {
        let pid = self.event.stamps().head().pid;
        self.symbolizer
            .user(pid, &[addr])
            .first()
            .map_or_else(|| format!("{addr:#x}"), |f| f.long_label())
    }

    fn stacks(&mut self) {
        let e = &*self.event;
        let kaddrs = e.kstack[..(e.kframes as usize).min(e.kstack.len())].to_vec();
        let uaddrs = e.ustack[..(e.uframes as usize).min(e.ustack.len())].to_vec();
        let addr = self.args.address;
        let show = |f: &Frame, label: String| {
            if addr {
                format!("{:16x} {label}", f.addr)
            } else {
                label
            }
        };
        if self.args.kernel_stack {
            let frames = self.symbolizer.kernel(&kaddrs);
            self.kstack = trim_tracing_frames(&frames)
                .iter()
                .map(|f| show(f, format!("{} [kernel]", f.label(true))))
                .collect();
        }
        if self.args.user_stack {
            let pid = self.event.stamps().head().pid;
            let frames: Vec<Rc<Frame>> = self.symbolizer.user(pid, &uaddrs);
            self.ustack = frames.iter().map(|f| show(f, f.long_label())).collect();
        }
    }

    fn stack_lines(&self) -> String {
        let mut s = String::new();
        if self.args.kernel_stack {
            if self.kstack.is_empty() {
                s.push_str("        [Missed Kernel Stack]\n");
            }
            for f in &self.kstack {
                s.push_str(&format!("        {f}\n"));
            }
        }
        if self.args.user_stack {
            if self.ustack.is_empty() {
                s.push_str("        [Missed User Stack]\n");
            }
            for f in &self.ustack {
                s.push_str(&format!("        {f}\n"));
            }
        }
        s
    }

    fn done(&self) -> bool {
        self.args.max_events.is_some_and(|m| self.printed >= m)
    }
}

/// An integer as a conversion shows it: C's types by the length modifier.
fn convert(c: &Conv, v: i64) -> String {
    let t = |signed| IntType {
        size: c.size,
        signed,
    };
    let u = t(false).apply(v) as u64;
    match c.conv {
        'd' | 'i' => t(true).apply(v).to_string(),
        'u' => u.to_string(),
        'x' => format!("{u:x}"),
        'X' => format!("{u:X}"),
        'o' => format!("{u:o}"),
        'c' => char::from(v as u8).to_string(),
        'p' => format!("{:#x}", v as u64),
        // %s of an integer: it was no string.
        _ => v.to_string(),
    }
}

fn pad(out: &mut String, c: &Conv, text: &str) {
    let n = text.chars().count();
    if n >= c.width {
        out.push_str(text);
    } else if c.left {
        out.push_str(text);
        out.extend(std::iter::repeat_n(' ', c.width - n));
    } else if c.zero && c.conv != 's' {
        let (sign, digits) = match text.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("", text),
        };
        out.push_str(sign);
        out.extend(std::iter::repeat_n('0', c.width - n));
        out.push_str(digits);
    } else {
        out.extend(std::iter::repeat_n(' ', c.width - n));
        out.push_str(text);
    }
}

fn source_of(op: &Operand) -> (types::tr_source, u8, u16, u8, bool) {
    use types::tr_source as S;
    match op {
        Operand::Arg(i, t) => (S::TR_SRC_ARG, *i, 0, t.size, t.signed),
        Operand::Retval(t) => (S::TR_SRC_RETVAL, 0, 0, t.size, t.signed),
        Operand::Field(f) => {
            let s = match f.kind {
                FieldKind::DataLoc => S::TR_SRC_DATALOC,
                FieldKind::Chars => S::TR_SRC_CHARS,
                _ => S::TR_SRC_FIELD,
            };
            (s, 0, f.offset as u16, f.size.min(8) as u8, f.signed)
        }
        Operand::Tid => (S::TR_SRC_TID, 0, 0, 8, true),
        Operand::Tgid => (S::TR_SRC_TGID, 0, 0, 8, true),
        Operand::Uid => (S::TR_SRC_UID, 0, 0, 8, true),
        Operand::Gid => (S::TR_SRC_GID, 0, 0, 8, true),
        Operand::Cpu => (S::TR_SRC_CPU, 0, 0, 8, true),
    }
}

fn kernel_value(op: &Operand, t: IntType) -> types::tr_value {
    let (source, index, offset, _, _) = source_of(op);
    types::tr_value {
        source: source.0 as u8,
        index,
        size: t.size,
        is_signed: t.signed as u8,
        offset,
        ..Default::default()
    }
}

impl Trace {
    /// The settings of the kernel side for probe `i`.
    fn kernel_probe(&self, point: &Planned, i: usize) -> types::tr_probe {
        let p = &self.probes[i];
        let mut k = types::tr_probe {
            is_return: (point.at == At::Return) as u8,
            ..Default::default()
        };
        if let Point::Kernel { func } = &point.point {
            k.syscall_regs =
                (func.starts_with("__x64_sys_") || func.starts_with("__arm64_sys_")) as u8;
        }
        let (terms, _) = p.kernel_terms(TERMS);
        k.nterms = terms.len() as u8;
        for (slot, t) in k.terms.iter_mut().zip(&terms) {
            slot.value = kernel_value(&t.value.0, t.value.1);
            slot.op = match t.op {
                Cmp::NonZero => 0,
                Cmp::Eq => 1,
                Cmp::Ne => 2,
                Cmp::Lt => 3,
                Cmp::Le => 4,
                Cmp::Gt => 5,
                Cmp::Ge => 6,
            };
            slot.constant = t.constant;
        }
        k.nstrs = p.strings.len() as u8;
        for (slot, s) in k.strs.iter_mut().zip(&p.strings) {
            *slot = kernel_value(s, IntType::I64);
        }
        // A tracepoint's record, as far as its last field read.
        let mut bytes = 0;
        for (_, op) in &p.names {
            if let Operand::Field(f) = op {
                let end = match f.kind {
                    FieldKind::DataLoc => f.offset + 4,
                    _ => f.offset + f.size,
                };
                bytes = bytes.max(end as usize);
            }
        }
        k.record_bytes = bytes.min(RECORD_MAX) as u16;
        k
    }

    fn what_filters(&self, i: usize) -> String {
        let p = &self.probes[i];
        if p.filter.is_none() {
            return "no filter".into();
        }
        let (terms, all) = p.kernel_terms(TERMS);
        match (terms.len(), all) {
            (_, true) => "its filter made in the kernel".into(),
            (0, false) => "its filter made by trace on each hit sent".into(),
            (n, false) => {
                format!("{n} comparisons of its filter made in the kernel, the rest by trace")
            }
        }
    }
}

impl Tool for Trace {
    common::tool_types!(TraceSkelBuilder);

    fn new(args: Args) -> Result<Self> {
        // Tracepoints' fields are checked here where tracefs can be read,
        // else once privileged (configure).
        let probes = parse_probes(&args.probes, false)?;
        let containers = args.containers.containers;
        let table = table(&args, &probes).containers(containers);
        Ok(Trace {
            kernel_filter: probes.iter().map(|p| p.kernel_terms(TERMS).1).collect(),
            probes,
            plan: Vec::new(),
            of_point: Vec::new(),
            use_cookie: true,
            event: Record::new(containers),
            table,
            symbolizer: Symbolizer::new(),
            message: String::new(),
            func: String::new(),
            kstack: Vec::new(),
            ustack: Vec::new(),
            printed: 0,
            aggregated: Vec::new(),
            seen: HashMap::new(),
            args,
        })
    }

    fn filters(&self) -> Filters {
        let mut f = Filters::processes(
            &self.args.pid.map(|p| IdList(vec![p])),
            self.args.cgroup.path(),
        );
        f.tids = self.args.tid.map(|t| vec![t]);
        f.thread_option = Some("-L");
        f.uid = self.args.uid;
        f
    }

    fn configure(&mut self, open: &mut OpenTraceSkel<'_>, _: &Setup) -> Result<()> {
        self.probes = parse_probes(&self.args.probes, true)?;
        self.kernel_filter = self
            .probes
            .iter()
            .map(|p| p.kernel_terms(TERMS).1)
            .collect();
        for (i, p) in self.probes.iter().enumerate() {
            // With -U, entry probes go past the frame setup, where a frame
            // pointer walk finds the caller.
            let points = plan::plan_with(
                std::slice::from_ref(&p.probe),
                self.args.pid,
                self.args.user_stack,
            )?;
            self.of_point.extend(std::iter::repeat_n(i, points.len()));
            self.plan.extend(points);
        }
        // Without cookies, each program serves one point.
        if !kprobe::attach_cookie() {
            let mut by_prog: HashMap<&str, usize> = HashMap::new();
            for p in &self.plan {
                *by_prog.entry(program_of(p, false)).or_default() += 1;
            }
            if let Some((prog, _)) = by_prog.iter().find(|(k, n)| **n > 1 && **k != "usdt") {
                anyhow::bail!(
                    "several {prog} points: telling them apart needs bpf_get_attach_cookie (Linux \
                     5.15), which this kernel lacks; trace one of each kind per run, or USDT probes"
                );
            }
            self.use_cookie = false;
        }
        let rodata = maps::rodata(&mut open.maps.rodata_data)?;
        rodata.use_cookie = self.use_cookie;
        for (i, p) in self.plan.iter().enumerate() {
            let i = i as u32;
            match program_of(p, self.use_cookie) {
                "uprobe" => rodata.lone_uprobe = i,
                "uretprobe" => rodata.lone_uretprobe = i,
                "kprobe" => rodata.lone_kprobe = i,
                "kretprobe" => rodata.lone_kretprobe = i,
                "tracepoint" => rodata.lone_tp = i,
                _ => {}
            }
        }
        rodata.include_self = self.args.include_self;
        rodata.placed_in_pid = plan::placed_in_pid(&self.plan, self.args.pid);
        rodata.str_bytes = self.args.string_size;
        rodata.str_slots = self
            .probes
            .iter()
            .map(|p| p.strings.len())
            .max()
            .unwrap_or(0) as u32;
        let stack_bytes = STACK_DEPTH * 8;
        rodata.kstack_bytes = if self.args.kernel_stack {
            stack_bytes
        } else {
            0
        };
        rodata.ustack_bytes = if self.args.user_stack { stack_bytes } else { 0 };
        debug_assert!(self.args.string_size <= STR_MAX);
        open.maps
            .probes
            .set_max_entries(self.plan.len().max(1) as u32)?;
        // BCC's -b: pages per CPU; one ring here, of their total.
        let cpus = libbpf_rs::num_possible_cpus().unwrap_or(1) as u64;
        let bytes = (u64::from(self.args.buffer_pages) * 4096 * cpus)
            .next_power_of_two()
            .clamp(1 << 16, 1 << 30);
        open.maps.events.set_max_entries(bytes as u32)?;
        let needs = plan::needs(&self.plan);
        let rets =
            |k: fn(&Point) -> bool| self.plan.iter().any(|p| k(&p.point) && p.at == At::Return);
        let p = &mut open.progs;
        let entries_only = |k: fn(&Point) -> bool| {
            self.plan
                .iter()
                .any(|p| k(&p.point) && (self.use_cookie || p.at == At::Entry))
        };
        load_when(
            needs.uprobe && entries_only(Point::is_uprobe),
            [&mut p.tr_uprobe],
        );
        load_when(
            !self.use_cookie && rets(Point::is_uprobe),
            [&mut p.tr_uretprobe],
        );
        load_when(needs.uprobe_multi, [&mut p.tr_umulti]);
        load_when(needs.usdt, [&mut p.tr_usdt]);
        load_when(needs.tracepoint, [&mut p.tr_tp]);
        load_when(
            needs.kprobe && entries_only(Point::is_kernel),
            [&mut p.tr_kprobe],
        );
        load_when(
            !self.use_cookie && rets(Point::is_kernel),
            [&mut p.tr_kretprobe],
        );
        load_when(needs.kprobe_multi, [&mut p.tr_kmulti]);
        Ok(())
    }

    fn hook_target(&self, program: &str) -> Option<String> {
        if program == "tr_tp" {
            return Some(plan::labels(&self.plan, Point::is_tracepoint));
        }
        program
            .starts_with("tr_k")
            .then(|| plan::labels(&self.plan, Point::is_kernel))
    }

    fn hook_notes(&self) -> Vec<String> {
        let mut notes = plan::describe(&self.plan);
        for (i, p) in self.probes.iter().enumerate() {
            notes.push(format!(
                "probe {}: {}: {}; {} strings read",
                i + 1,
                p.probe.text,
                self.what_filters(i),
                p.strings.len()
            ));
        }
        if !self.use_cookie {
            notes.push("no attach cookies here: each program serves its one point".into());
        }
        notes
    }

    fn loaded(&mut self, skel: &mut TraceSkel<'_>) -> Result<()> {
        for (i, point) in self.plan.iter().enumerate() {
            let k = self.kernel_probe(point, self.of_point[i]);
            // SAFETY: tr_probe is Plain (repr(C) integers).
            let bytes = unsafe { plain::as_bytes(&k) };
            skel.maps
                .probes
                .update(&(i as u32).to_ne_bytes(), bytes, libbpf_rs::MapFlags::ANY)
                .context("setting the probes' settings")?;
        }
        if self.args.kernel_stack
            || self.probes.iter().any(|p| {
                p.format
                    .iter()
                    .any(|c| matches!(c, Piece::Conv(c) if c.conv == 'K'))
            })
        {
            self.symbolizer.warm_kernel();
        }
        Ok(())
    }

    fn attach(&mut self, skel: &mut TraceSkel<'_>) -> Result<Vec<Link>> {
        let p = &skel.progs;
        let needs = plan::needs(&self.plan);
        if self.use_cookie {
            let progs = Programs {
                uprobe: needs.uprobe.then_some(&p.tr_uprobe),
                uprobe_multi: needs.uprobe_multi.then_some(&p.tr_umulti),
                usdt: needs.usdt.then_some(&p.tr_usdt),
                tracepoint: needs.tracepoint.then_some(&p.tr_tp),
                kprobe: needs.kprobe.then_some(&p.tr_kprobe),
                kprobe_multi: needs.kprobe_multi.then_some(&p.tr_kmulti),
            };
            return plan::attach(&self.plan, &progs, self.args.pid, true);
        }
        // One point per program: each attached with its own.
        let mut links = Vec::new();
        for point in &self.plan {
            let ret = point.at == At::Return;
            let progs = Programs {
                uprobe: Some(if ret { &p.tr_uretprobe } else { &p.tr_uprobe }),
                uprobe_multi: None,
                usdt: Some(&p.tr_usdt),
                tracepoint: Some(&p.tr_tp),
                kprobe: Some(if ret { &p.tr_kretprobe } else { &p.tr_kprobe }),
                kprobe_multi: None,
            };
            links.extend(plan::attach(
                std::slice::from_ref(point),
                &progs,
                self.args.pid,
                false,
            )?);
        }
        Ok(links)
    }

    common::event_kind!(table);

    fn event(&mut self, data: &[u8], out: &mut Out) -> io::Result<()> {
        if self.done() {
            return Ok(());
        }
        self.event.read(data);
        let point = self.event.probe as usize;
        let Some(&i) = self.of_point.get(point) else {
            return Ok(());
        };
        let p = self.probes[i].clone();
        if let Some(name) = &self.args.name {
            let comm = common::output::c_bytes(&self.event.stamps().head().comm);
            if !String::from_utf8_lossy(comm).contains(name.as_str()) {
                return Ok(());
            }
        }
        if !self.kernel_filter[i] {
            if let Some(f) = &p.filter {
                if self.eval(&p, f).int() == 0 {
                    return Ok(());
                }
            }
        }
        self.message = self.format(&p);
        if let Some(m) = &self.args.msg_filter {
            if !self.message.contains(m.as_str()) {
                return Ok(());
            }
        }
        self.func = p.display.clone();
        if self.args.kernel_stack || self.args.user_stack {
            self.stacks();
        }
        self.printed += 1;
        if self.args.aggregate {
            let line = self.table.render(self)?;
            let mut s = String::from_utf8_lossy(&line).into_owned();
            s.push('\n');
            if !self.args.common.json {
                s.push_str(&self.stack_lines());
            }
            match self.seen.get(&s) {
                Some(&k) => self.aggregated[k].1 += 1,
                None => {
                    self.seen.insert(s.clone(), self.aggregated.len());
                    self.aggregated.push((s, 1));
                }
            }
            return Ok(());
        }
        self.table.row(out, self)?;
        if !self.args.common.json && (self.args.kernel_stack || self.args.user_stack) {
            write!(out, "{}", self.stack_lines())?;
            writeln!(out)?;
        }
        Ok(())
    }

    fn idle(&mut self) -> bool {
        self.done()
    }

    fn report(&mut self, _: &TraceSkel<'_>, out: &mut Out, when: When) -> Result<()> {
        if when != When::End || !self.args.aggregate {
            return Ok(());
        }
        let mut rows: Vec<&(String, u64)> = self.aggregated.iter().collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.1));
        for (line, n) in rows {
            write!(out, "{line}-->COUNT {n}\n\n")?;
        }
        Ok(())
    }
}

common::stamped_by_record!(Trace);

/// Parses the probes; `strict`: a tracepoint's format must be read (else
/// its fields are checked later).
fn parse_probes(texts: &[String], strict: bool) -> Result<Vec<TraceProbe>> {
    let mut probes = Vec::new();
    for text in texts {
        let p = TraceProbe::parse(text, |probe| match &probe.target {
            Target::Tracepoint { category, event } => {
                match tracepoints::format(category.text(), event.text()) {
                    Ok(f) => Ok(Some(f)),
                    Err(_) if !strict => Ok(None),
                    Err(e) => Err(format!(
                        "no tracepoint {}:{} ({e:#})",
                        category.text(),
                        event.text()
                    )),
                }
            }
            _ => Ok(Some(Vec::new())),
        })
        .map_err(|e| usage(e.to_string()))?;
        probes.push(p);
    }
    Ok(probes)
}

/// The program a point attaches with (`use_cookie`: entries and returns
/// share one).
fn program_of(p: &Planned, use_cookie: bool) -> &'static str {
    let ret = p.at == At::Return && !use_cookie;
    match p.point {
        Point::Uprobe { .. } if ret => "uretprobe",
        Point::Uprobe { .. } => "uprobe",
        Point::Usdt { .. } => "usdt",
        Point::Tracepoint { .. } => "tracepoint",
        Point::Kernel { .. } if ret => "kretprobe",
        Point::Kernel { .. } => "kprobe",
    }
}

/// BCC's columns: [TIME] [CPU] PID TID COMM FUNC and the message, under
/// `-` where some probe prints one.
fn table(args: &Args, probes: &[TraceProbe]) -> Table<Trace> {
    let time_w = if args.unix_timestamp { 17 } else { 8 };
    let any_format = probes.iter().any(|p| !p.format.is_empty());
    let msg = if any_format {
        Column::new("-", 0, "message", |t: &Trace| t.message.as_str().into())
    } else {
        Column::new("", 0, "message", |t: &Trace| t.message.as_str().into())
    };
    let time = if args.timestamp {
        if args.unix_timestamp {
            Column::new("TIME", time_w, "", |t: &Trace| {
                let s = t.stamps();
                let secs = s.clock.wall_secs(s.head().ts_ns);
                let frac = s.head().ts_ns % 1_000_000_000;
                let text = format!("{secs}.{:06}", frac / 1000);
                text[..text.len().min(17)].to_string().into()
            })
        } else {
            Column::new("TIME", time_w, "", |t: &Trace| {
                let text = format!("{:.6}", t.stamps().elapsed());
                text[..text.len().min(8)].to_string().into()
            })
        }
    } else {
        Column::new("TIME", time_w, "", |t: &Trace| t.stamps().hms().into())
    };
    Table::<Trace>::new(args.common.json)
        .column(args.timestamp || args.time, time)
        .column(true, columns::ts())
        .column(
            args.print_cpu,
            Column::new("CPU", 3, "cpu", |t: &Trace| t.event.cpu.into()),
        )
        .columns([
            columns::pid(7),
            columns::tid(7),
            columns::cgroup_id(),
            columns::comm("COMM", 15),
            Column::new("FUNC", 16, "func", |t: &Trace| t.func.as_str().into()),
            msg,
            Column::json("kernel_stack", |t: &Trace| {
                stack_cell(t.args.kernel_stack, &t.kstack)
            })
            .optional(),
            Column::json("user_stack", |t: &Trace| {
                stack_cell(t.args.user_stack, &t.ustack)
            })
            .optional(),
        ])
}

fn stack_cell(wanted: bool, labels: &[String]) -> Cell<'_> {
    if !wanted {
        return Cell::Null;
    }
    Cell::List(labels.iter().map(|l| l.as_bytes()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(s: &str) -> Conv {
        match &spec::parse_format("", s, 0).unwrap()[0] {
            Piece::Conv(c) => c.clone(),
            p => panic!("{p:?}"),
        }
    }

    fn shown(fmt: &str, v: i64) -> String {
        let c = conv(fmt);
        let mut out = String::new();
        pad(&mut out, &c, &convert(&c, v));
        out
    }

    #[test]
    fn conversions_take_cs_types() {
        assert_eq!(shown("%d", 0xffff_ffff), "-1");
        assert_eq!(shown("%ld", 0xffff_ffff), "4294967295");
        assert_eq!(shown("%u", -1), "4294967295");
        assert_eq!(shown("%llu", -1), "18446744073709551615");
        assert_eq!(shown("%hd", 0x1_8000), "-32768");
        assert_eq!(shown("%x", 0x1_0000_00ff), "ff");
        assert_eq!(shown("%llx", 0x1_0000_00ff), "1000000ff");
        assert_eq!(shown("%c", 65), "A");
        assert_eq!(shown("%5d", 42), "   42");
        assert_eq!(shown("%-5d|", 42), "42   ");
        assert_eq!(shown("%05d", -42), "-0042");
        assert_eq!(shown("%p", 4096), "0x1000");
    }

    #[test]
    fn the_header_is_bccs() {
        let args = Args::try_parse_from(["trace", "c:malloc \"%d\", arg1"]).unwrap();
        let probes = [TraceProbe::parse(&args.probes[0], |_| Ok(Some(Vec::new()))).unwrap()];
        assert_eq!(
            table(&args, &probes).header(),
            "PID     TID     COMM            FUNC             -"
        );
        let args = Args::try_parse_from(["trace", "-t", "-C", "c:malloc"]).unwrap();
        let probes = [TraceProbe::parse(&args.probes[0], |_| Ok(Some(Vec::new()))).unwrap()];
        assert_eq!(
            table(&args, &probes).header().trim_end(),
            "TIME     CPU PID     TID     COMM            FUNC"
        );
    }
}
