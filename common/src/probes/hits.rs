//! The kernel side trace and argdist share (bpf/trace.bpf.c): their probes'
//! points planned and attached, each point's settings, and the values of a
//! hit's record as their expressions name them.

use std::collections::HashMap;

use crate::kernel::maps;
use crate::kernel::probe::{self as kprobe, load_when};
use crate::probes::expr::{self, Expr, IntType, Value};
use crate::probes::plan::{self, Planned, Point, Programs};
use crate::probes::tracepoints::{self, Field, FieldKind};
use crate::probes::{At, Probe, SpecError, Target};
use crate::usage::usage;
use anyhow::{Context as _, Result};
use libbpf_rs::{Link, MapCore};

use super::skel::{types, OpenTraceSkel, TraceSkel};
use super::spec::{Cmp, Operand, TraceProbe};

use super::limits::{RECORD_MAX, STACK_DEPTH, STRS, STR_MAX, TERMS};

/// The string in slot `slot` of a record (slots of `size` bytes).
pub fn str_slot(e: &types::tr_event, slot: usize, size: usize) -> &[u8] {
    let start = slot * size;
    let bytes = e.strs.get(start..start + size).unwrap_or(&[]);
    // SAFETY: i8 and u8 have the same layout.
    let bytes: &[u8] = unsafe { &*(bytes as *const [i8] as *const [u8]) };
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// Reads from the process the strings the probe could not (`str_missed`:
/// a page the process had not touched yet, as at a string's first use),
/// into their slots of `size` bytes; `[unreadable]` where the process's
/// memory cannot be read (it has exited).
pub fn fill_missed(e: &mut types::tr_event, size: usize) {
    if e.str_missed == 0 || size < 2 {
        return;
    }
    let mem = std::fs::File::open(format!("/proc/{}/mem", e.task.pid)).ok();
    for slot in 0..STRS {
        if e.str_missed & (1 << slot) == 0 {
            continue;
        }
        let text = mem
            .as_ref()
            .and_then(|m| read_c_string(m, e.str_addrs[slot], size - 1))
            .unwrap_or_else(|| b"[unreadable]".to_vec());
        let Some(dst) = e.strs.get_mut(slot * size..(slot + 1) * size) else {
            continue;
        };
        for (d, b) in dst.iter_mut().zip(text.iter().chain(std::iter::once(&0))) {
            *d = *b as i8;
        }
    }
}

/// A NUL-terminated string of at most `max` bytes at `addr` in a process's
/// memory (`/proc/PID/mem`, which faults its pages in), read a page at a
/// time so that a short string before an unmapped page is still read.
fn read_c_string(mem: &std::fs::File, addr: u64, max: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < max {
        let chunk = ((PAGE - at % PAGE) as usize).min(max - out.len());
        let mut buf = vec![0u8; chunk];
        let n = mem.read_at(&mut buf, at).ok().filter(|n| *n > 0);
        let Some(n) = n else {
            // Nothing at all: unreadable; a part: what was read.
            return (!out.is_empty()).then_some(out);
        };
        if let Some(end) = buf[..n].iter().position(|b| *b == 0) {
            out.extend_from_slice(&buf[..end]);
            return Some(out);
        }
        out.extend_from_slice(&buf[..n]);
        at += n as u64;
    }
    Some(out)
}

/// The value a name or member `e` of probe `p` has in hit `ev` (strings
/// of `str_size` bytes): a string where `p` reads it as one.
pub fn value<'a>(p: &TraceProbe, e: &Expr, ev: &'a types::tr_event, str_size: usize) -> Value<'a> {
    let col = match e {
        Expr::Name(_, c) | Expr::Member(_, _, c) => *c,
        _ => return Value::Int(0),
    };
    let Some(op) = p.operand(col) else {
        return Value::Int(0);
    };
    if p.string_cols.contains(&col) {
        match op {
            Operand::Field(f) if f.kind == FieldKind::Chars => {
                let start = (f.offset as usize).min(RECORD_MAX);
                let end = (start + f.size as usize).min(ev.record_bytes as usize);
                let b = ev.record.get(start..end.max(start)).unwrap_or(&[]);
                let n = b.iter().position(|c| *c == 0).unwrap_or(b.len());
                return Value::Str(&b[..n]);
            }
            Operand::Comm => return Value::Str(crate::output::c_bytes(&ev.task.comm)),
            _ => {}
        }
        let slot = p.strings.iter().position(|s| s == op).unwrap_or(0);
        return Value::Str(str_slot(ev, slot, str_size));
    }
    Value::Int(match op {
        Operand::Arg(i, t) => t.apply(ev.args[*i as usize] as i64),
        Operand::EntryArg(i, t) => t.apply(ev.entry_args[*i as usize] as i64),
        Operand::Retval(t) => t.apply(ev.retval as i64),
        Operand::Latency => ev.latency_ns as i64,
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
        Operand::Tid => ev.task.tid.into(),
        Operand::Tgid => ev.task.pid.into(),
        Operand::Uid => ev.uid.into(),
        Operand::Gid => ev.gid.into(),
        Operand::Cpu => ev.cpu.into(),
        Operand::Comm => 0,
    })
}

/// Evaluates `e` of probe `p` on hit `ev`.
pub fn eval<'a>(
    p: &'a TraceProbe,
    e: &'a Expr,
    ev: &'a types::tr_event,
    str_size: usize,
) -> Value<'a> {
    expr::eval(e, &|n| value(p, n, ev, str_size))
}

/// Whether `p`'s filter lets hit `ev` through, where the kernel did not
/// make all of it.
pub fn passes(p: &TraceProbe, ev: &types::tr_event, str_size: usize) -> bool {
    match &p.filter {
        Some(f) if !p.filter_in_kernel => eval(p, f, ev, str_size).int() != 0,
        _ => true,
    }
}

fn source_of(op: &Operand) -> (types::tr_source, u8, u16) {
    use types::tr_source as S;
    match op {
        Operand::Arg(i, _) => (S::TR_SRC_ARG, *i, 0),
        Operand::EntryArg(i, _) => (S::TR_SRC_ENTRY_ARG, *i, 0),
        Operand::Retval(_) => (S::TR_SRC_RETVAL, 0, 0),
        Operand::Latency => (S::TR_SRC_LATENCY, 0, 0),
        Operand::Field(f) => {
            let s = match f.kind {
                FieldKind::DataLoc => S::TR_SRC_DATALOC,
                FieldKind::Chars => S::TR_SRC_CHARS,
                _ => S::TR_SRC_FIELD,
            };
            (s, 0, f.offset as u16)
        }
        Operand::Tid => (S::TR_SRC_TID, 0, 0),
        Operand::Tgid => (S::TR_SRC_TGID, 0, 0),
        Operand::Uid => (S::TR_SRC_UID, 0, 0),
        Operand::Gid => (S::TR_SRC_GID, 0, 0),
        Operand::Cpu => (S::TR_SRC_CPU, 0, 0),
        Operand::Comm => (S::TR_SRC_NONE, 0, 0),
    }
}

fn kernel_value(op: &Operand, t: IntType) -> types::tr_value {
    let (source, index, offset) = source_of(op);
    types::tr_value {
        source: source.0 as u8,
        index,
        size: t.size,
        is_signed: t.signed as u8,
        offset,
        ..Default::default()
    }
}

/// The kernel side's settings of a point of probe `p`; `stash_for`: an
/// entry kept for the return at that point.
fn kernel_probe(p: &TraceProbe, point: &Planned, stash_for: Option<u32>) -> types::tr_probe {
    let mut k = types::tr_probe {
        is_return: (point.at == At::Return) as u8,
        ..Default::default()
    };
    if let Point::Kernel { func } = &point.point {
        k.syscall_regs = (func.starts_with("__x64_sys_") || func.starts_with("__arm64_sys_")) as u8;
    }
    if let Some(pair) = stash_for {
        k.stash = 1;
        k.pair = pair;
        return k;
    }
    k.needs_entry = p.needs_entry as u8;
    k.ids = p
        .names
        .iter()
        .any(|(_, o)| matches!(o, Operand::Uid | Operand::Gid)) as u8;
    if let Some(agg) = &p.agg {
        k.agg = if agg.hist {
            types::tr_agg_kind::TR_AGG_HIST.0 as u8
        } else {
            types::tr_agg_kind::TR_AGG_COUNT.0 as u8
        };
        k.naggs = agg.values.len() as u8;
        for (slot, (op, own, kept)) in k.aggs.iter_mut().zip(&agg.values) {
            *slot = kernel_value(op, *own);
            slot.size2 = kept.size;
            slot.is_signed2 = kept.signed as u8;
        }
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

/// What `--dry-run` and `-v` say of a probe's filter.
pub fn what_filters(p: &TraceProbe) -> String {
    if p.filter.is_none() {
        return "no filter".into();
    }
    let (terms, all) = p.kernel_terms(TERMS);
    match (terms.len(), all) {
        (_, true) => "its filter made in the kernel".into(),
        (0, false) => "its filter made in user space on each hit sent".into(),
        (n, false) => {
            format!("{n} comparisons of its filter made in the kernel, the rest in user space")
        }
    }
}

/// What a parse is given to read a tracepoint's fields ([`fields_for`]).
pub type FieldsOf<'a> = &'a dyn Fn(&Probe) -> Result<Option<Vec<Field>>, String>;

/// A tracepoint's fields for a parse: read from tracefs; where that fails
/// and `strict` is false (no privileges yet), None, to be checked later.
pub fn fields_for(probe: &Probe, strict: bool) -> Result<Option<Vec<Field>>, String> {
    let Target::Tracepoint { category, event } = &probe.target else {
        return Ok(Some(Vec::new()));
    };
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

/// Parses each item with `parse` (given the tracepoint fields' reader);
/// errors are usage errors.
pub fn parse_all<I, T>(
    items: &[I],
    strict: bool,
    parse: impl Fn(&I, FieldsOf) -> Result<T, SpecError>,
) -> Result<Vec<T>> {
    let fields = move |p: &Probe| fields_for(p, strict);
    items
        .iter()
        .map(|i| parse(i, &fields).map_err(|e| usage(e.to_string())))
        .collect()
}

/// What the kernel side is told beyond the points.
pub struct Settings {
    pub pid: Option<u32>,
    pub include_self: bool,
    pub str_size: u32,
    pub kernel_stack: bool,
    pub user_stack: bool,
    /// BCC's -b: pages per CPU (the one ring holds their total).
    pub buffer_pages: u32,
}

/// The points of a run's probes, in cookie order.
#[derive(Default)]
pub struct Points {
    pub plan: Vec<Planned>,
    /// The probe each point serves.
    pub of_point: Vec<usize>,
    /// An entry kept for a return: that return's point.
    pub stash_for: Vec<Option<u32>>,
    pub use_cookie: bool,
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
        // trace reads a tracepoint's fields: it plans them classic.
        Point::Syscall { .. } => "raw_tracepoint",
    }
}

impl Points {
    /// Plans every probe; a return that needs its entry gets an entry
    /// point that keeps it. `whole_frames`: entries past the frame setup
    /// (for user stacks). Without cookies each program may serve one point.
    pub fn plan(probes: &[TraceProbe], pid: Option<u32>, whole_frames: bool) -> Result<Points> {
        let mut pts = Points {
            use_cookie: true,
            ..Points::default()
        };
        for (i, p) in probes.iter().enumerate() {
            let serving = plan::Serving {
                whole_frames,
                raw_syscalls: false,
            };
            let points = plan::plan_with(std::slice::from_ref(&p.probe), pid, serving)?;
            for point in points {
                let ret_index = pts.plan.len() as u32;
                let entry = (p.needs_entry && point.at == At::Return).then(|| Planned {
                    at: At::Entry,
                    ..point.clone()
                });
                pts.plan.push(point);
                pts.of_point.push(i);
                pts.stash_for.push(None);
                if let Some(e) = entry {
                    pts.plan.push(e);
                    pts.of_point.push(i);
                    pts.stash_for.push(Some(ret_index));
                }
            }
        }
        if !kprobe::attach_cookie() {
            let mut by_prog: HashMap<&str, usize> = HashMap::new();
            for p in &pts.plan {
                *by_prog.entry(program_of(p, false)).or_default() += 1;
            }
            if let Some((prog, _)) = by_prog.iter().find(|(k, n)| **n > 1 && **k != "usdt") {
                anyhow::bail!(
                    "several {prog} points: telling them apart needs bpf_get_attach_cookie (Linux \
                     5.15), which this kernel lacks; probe one of each kind per run, or USDT probes"
                );
            }
            pts.use_cookie = false;
        }
        Ok(pts)
    }

    /// Sets the kernel side's read-only data and map sizes, and which
    /// programs load.
    pub fn configure(
        &self,
        open: &mut OpenTraceSkel<'_>,
        probes: &[TraceProbe],
        s: &Settings,
    ) -> Result<()> {
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
        rodata.include_self = s.include_self;
        rodata.placed_in_pid = plan::placed_in_pid(&self.plan, s.pid);
        debug_assert!(s.str_size <= STR_MAX);
        rodata.str_bytes = s.str_size;
        rodata.str_slots = probes.iter().map(|p| p.strings.len()).max().unwrap_or(0) as u32;
        let stack_bytes = STACK_DEPTH * 8;
        rodata.kstack_bytes = if s.kernel_stack { stack_bytes } else { 0 };
        rodata.ustack_bytes = if s.user_stack { stack_bytes } else { 0 };
        open.maps
            .probes
            .set_max_entries(self.plan.len().max(1) as u32)?;
        if !self.stash_for.iter().any(Option::is_some) {
            open.maps.stashed.set_max_entries(1)?;
        }
        if !probes.iter().any(|p| p.agg.is_some()) {
            open.maps.aggs.set_max_entries(1)?;
        }
        let cpus = libbpf_rs::num_possible_cpus().unwrap_or(1) as u64;
        let bytes = (u64::from(s.buffer_pages) * 4096 * cpus)
            .next_power_of_two()
            .clamp(1 << 16, 1 << 30);
        open.maps.events.set_max_entries(bytes as u32)?;
        let needs = plan::needs(&self.plan);
        let rets =
            |k: fn(&Point) -> bool| self.plan.iter().any(|p| k(&p.point) && p.at == At::Return);
        let entries = |k: fn(&Point) -> bool| {
            self.plan
                .iter()
                .any(|p| k(&p.point) && (self.use_cookie || p.at == At::Entry))
        };
        let c = self.use_cookie;
        let p = &mut open.progs;
        load_when(
            needs.uprobe && entries(Point::is_uprobe),
            [&mut p.tr_uprobe],
        );
        load_when(!c && rets(Point::is_uprobe), [&mut p.tr_uretprobe]);
        load_when(needs.uprobe_multi, [&mut p.tr_umulti]);
        load_when(needs.usdt, [&mut p.tr_usdt]);
        load_when(needs.tracepoint, [&mut p.tr_tp]);
        load_when(c && needs.tracepoint_uses >= 2, [&mut p.tr_tp2]);
        load_when(c && needs.tracepoint_uses >= 3, [&mut p.tr_tp3]);
        load_when(c && needs.tracepoint_uses >= 4, [&mut p.tr_tp4]);
        load_when(
            needs.kprobe && entries(Point::is_kernel),
            [&mut p.tr_kprobe],
        );
        load_when(!c && rets(Point::is_kernel), [&mut p.tr_kretprobe]);
        load_when(needs.kprobe_multi, [&mut p.tr_kmulti]);
        let prefault = self.prefaults(probes);
        load_when(prefault && needs.uprobe, [&mut p.tr_prefault]);
        load_when(prefault && needs.uprobe_multi, [&mut p.tr_prefault_multi]);
        Ok(())
    }

    /// Whether user functions' string arguments are faulted in first by a
    /// sleepable program (`tr_prefault`): where the kernel has sleepable
    /// uprobes and cookies, and some user function's probe reads a string.
    pub fn prefaults(&self, probes: &[TraceProbe]) -> bool {
        let needs = plan::needs(&self.plan);
        let strings = self
            .plan
            .iter()
            .zip(&self.of_point)
            .any(|(p, i)| p.point.is_uprobe() && !probes[*i].strings.is_empty());
        self.use_cookie
            && strings
            && (!needs.uprobe || kprobe::sleepable_uprobes(false))
            && (!needs.uprobe_multi || kprobe::sleepable_uprobes(true))
    }

    /// Writes each point's settings into the loaded `probes` map.
    pub fn load(&self, skel: &mut TraceSkel<'_>, probes: &[TraceProbe]) -> Result<()> {
        for (i, point) in self.plan.iter().enumerate() {
            let k = kernel_probe(&probes[self.of_point[i]], point, self.stash_for[i]);
            // SAFETY: tr_probe is Plain (repr(C) integers).
            let bytes = unsafe { plain::as_bytes(&k) };
            skel.maps
                .probes
                .update(&(i as u32).to_ne_bytes(), bytes, libbpf_rs::MapFlags::ANY)
                .context("setting the probes' settings")?;
        }
        Ok(())
    }

    /// Attaches every point: with cookies each kind's program to all its
    /// points, else each point with its own program.
    pub fn attach(&self, skel: &mut TraceSkel<'_>, pid: Option<u32>) -> Result<Vec<Link>> {
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
                tracepoint_again: [&p.tr_tp2, &p.tr_tp3, &p.tr_tp4]
                    .into_iter()
                    .take(needs.tracepoint_uses.saturating_sub(1))
                    .collect(),
                ..Programs::default()
            };
            let mut links = plan::attach(&self.plan, &progs, pid, true)?;
            // After the points' own programs: a uprobe's consumers run
            // newest first, so these run before them.
            if skel.progs.tr_prefault.autoload() || skel.progs.tr_prefault_multi.autoload() {
                links.extend(self.attach_prefault(skel, pid)?);
            }
            return Ok(links);
        }
        let mut links = Vec::new();
        for (i, point) in self.plan.iter().enumerate() {
            let ret = point.at == At::Return;
            let progs = Programs {
                uprobe: Some(if ret { &p.tr_uretprobe } else { &p.tr_uprobe }),
                uprobe_multi: None,
                usdt: Some(&p.tr_usdt),
                tracepoint: Some(&p.tr_tp),
                kprobe: Some(if ret { &p.tr_kretprobe } else { &p.tr_kprobe }),
                ..Programs::default()
            };
            links.extend(plan::attach_at(
                std::slice::from_ref(point),
                &progs,
                pid,
                false,
                i,
            )?);
        }
        Ok(links)
    }

    /// Attaches `tr_prefault` to every user function point, each with its
    /// own cookie (runs of them at once).
    fn attach_prefault(&self, skel: &TraceSkel<'_>, pid: Option<u32>) -> Result<Vec<Link>> {
        let needs = plan::needs(&self.plan);
        let progs = Programs {
            uprobe: needs.uprobe.then_some(&skel.progs.tr_prefault),
            uprobe_multi: needs.uprobe_multi.then_some(&skel.progs.tr_prefault_multi),
            ..Programs::default()
        };
        let mut links = Vec::new();
        let mut start = 0;
        while start < self.plan.len() {
            let uprobe = self.plan[start].point.is_uprobe();
            let len = self.plan[start..]
                .iter()
                .take_while(|p| p.point.is_uprobe() == uprobe)
                .count();
            if uprobe {
                let run = &self.plan[start..start + len];
                links.extend(plan::attach_at(run, &progs, pid, true, start)?);
            }
            start += len;
        }
        Ok(links)
    }

    /// The points a program without a section target serves, each once.
    pub fn hook_target(&self, program: &str) -> Option<String> {
        let at = match program {
            "tr_kretprobe" => Some(At::Return),
            "tr_kprobe" if !self.use_cookie => Some(At::Entry),
            _ => None,
        };
        let which: fn(&Point) -> bool = match program {
            "tr_tp" | "tr_tp2" | "tr_tp3" | "tr_tp4" => Point::is_tracepoint,
            p if p.starts_with("tr_k") => Point::is_kernel,
            _ => return None,
        };
        let mut labels: Vec<&str> = Vec::new();
        for p in &self.plan {
            if which(&p.point)
                && at.is_none_or(|a| a == p.at)
                && !labels.contains(&p.label.as_str())
            {
                labels.push(&p.label);
            }
        }
        Some(labels.join(","))
    }

    /// What `--dry-run` and `-v` say: how the points attach, each probe's
    /// filter and strings.
    pub fn notes(&self, probes: &[TraceProbe]) -> Vec<String> {
        let mut notes = plan::describe(&self.plan);
        for (i, p) in probes.iter().enumerate() {
            notes.push(format!(
                "probe {}: {}: {}; {} strings read{}",
                i + 1,
                p.probe.text,
                what_filters(p),
                p.strings.len(),
                match (p.needs_entry, p.agg.is_some()) {
                    (true, true) => "; its entry kept for the return; counted in the kernel",
                    (true, false) => "; its entry kept for the return",
                    (false, true) => "; counted in the kernel",
                    (false, false) => "",
                }
            ));
        }
        if !self.use_cookie {
            notes.push("no attach cookies here: each program serves its one point".into());
        }
        let strings = self
            .plan
            .iter()
            .zip(&self.of_point)
            .any(|(p, i)| p.point.is_uprobe() && !probes[*i].strings.is_empty());
        if self.prefaults(probes) {
            notes.push(
                "user strings: their pages faulted in first by a sleepable program \
                 (a string's first use is read)"
                    .into(),
            );
        } else if strings {
            notes.push(
                "user strings: no sleepable uprobes here: a string in a page not yet in \
                 memory is read from the process after the hit ([unreadable] where it is gone)"
                    .into(),
            );
        }
        notes
    }
}
