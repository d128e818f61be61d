//! The stack tools' kind, a pipeline the lifecycle drives as it drives the
//! histogram kind. A tool says what it counts ([`Spec`], from
//! [`crate::run::lifecycle::Tool::stacks`]); its kernel side sums a value by
//! process and stacks with stackcounts.bpf.h. The kind does the rest, once
//! for every such tool: the stack options ([`StackArgs`]), the kernel side's
//! switches and map sizes, `--unwind dwarf`'s copies unwound and summed
//! here, the memory maps of the processes seen kept for the report, the
//! symbolizer, the report in BCC's order as multi-line stacks, folded lines
//! or JSON ([`report`]), the flame graph and the pprof profile ([`files`]),
//! and the notes for the kernel side's failures.

pub mod files;
pub mod offcpu;
pub mod report;
pub mod resolve;

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use libbpf_rs::{MapCore, Object, OpenMapMut, OpenObject};

use crate::cli::IdList;
use crate::kernel::cgroups::Resolver;
use crate::kernel::maps;
use crate::output::Out;
use crate::run::schedule::{Schedule, When};
use crate::skel::types::stack_error as E;
use crate::skel::types::{self, stack_limits};
use crate::sym::Symbolizer;
use crate::unwind::{StackTable, UnwindArgs, Unwinder};

pub use files::{Outputs, Profile, Report, Svg};
pub use offcpu::{OffCpuArgs, OffCpuLook, OffCpuToolArgs};
pub use report::{Join, Look, PerStack, Value};
pub use resolve::{resolve, Halves, Key, Parts, ProcessKeeper, User, Waker};

/// The deepest stack `--perf-max-stack-depth` takes.
pub const MAX_STACK_DEPTH: u32 = stack_limits::MAX_STACK_DEPTH.0;

/// What every stack tool takes.
#[derive(clap::Args, Debug, Clone)]
pub struct StackArgs {
    /// The number of unique stack traces that can be stored
    #[arg(long, value_name = "N", default_value_t = 16384,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub stack_storage_size: u32,
    /// The limit for both kernel and user stack traces
    #[arg(long, value_name = "DEPTH", default_value_t = 127,
          value_parser = clap::value_parser!(u32).range(1..=MAX_STACK_DEPTH as i64))]
    pub perf_max_stack_depth: u32,
    #[command(flatten)]
    pub unwind: UnwindArgs,
    /// Output folded format, one line per stack (for flame graphs)
    #[arg(short = 'f', long, conflicts_with = "json")]
    pub folded: bool,
    /// Also write a flame graph of each report to FILE (SVG; - for
    /// standard output)
    #[arg(long, value_name = "FILE")]
    pub svg: Option<crate::output::file::OutFile>,
    /// Also write each report to FILE as a pprof profile (gzipped
    /// profile.proto, every stack, labelled with comm and pid), for go tool
    /// pprof, Pyroscope, Parca or Grafana (- for standard output)
    #[arg(long, value_name = "FILE")]
    pub pprof: Option<crate::output::file::OutFile>,
    /// Root each stack at its container ([ID], else the systemd unit, else
    /// the cgroup path) in every output; pprof samples gain container and
    /// unit labels
    #[arg(long)]
    pub containers: bool,
}

/// Which halves of the stacks are shown, and how: what every stack tool
/// that takes both halves has (not memleak: user stacks only).
#[derive(clap::Args, Debug, Clone)]
pub struct ShownArgs {
    /// Show user space stacks only (no kernel space stacks)
    #[arg(short = 'U', long, conflicts_with = "kernel_stacks_only")]
    pub user_stacks_only: bool,
    /// Show kernel space stacks only (no user space stacks)
    #[arg(short = 'K', long)]
    pub kernel_stacks_only: bool,
    /// Insert a delimiter between kernel and user stacks
    #[arg(short = 'd', long)]
    pub delimited: bool,
}

impl ShownArgs {
    pub fn halves(&self) -> Halves {
        Halves {
            kernel: !self.user_stacks_only,
            user: !self.kernel_stacks_only,
        }
    }

    /// The stacks in a banner's words: `user`, `kernel`, `user + kernel`.
    pub fn words(&self) -> &'static str {
        match (self.user_stacks_only, self.kernel_stacks_only) {
            (true, _) => "user",
            (_, true) => "kernel",
            _ => "user + kernel",
        }
    }
}

/// A banner's end: ` for 5 secs.`, or `... Hit Ctrl-C to end.`.
pub fn until(duration: Option<u64>) -> String {
    match duration {
        Some(d) => format!(" for {d} secs."),
        None => "... Hit Ctrl-C to end.".into(),
    }
}

impl StackArgs {
    /// Whether user stacks are unwound from copies (`--unwind`, auto judged
    /// from the executables of the processes or threads named): never when
    /// no user stack is shown.
    pub fn dwarf(&self, user_stacks: bool, ids: Option<&IdList>) -> bool {
        if !user_stacks {
            return false;
        }
        let exes: Vec<PathBuf> = ids
            .map(|ids| {
                ids.0
                    .iter()
                    .map(|p| crate::unwind::executable_of(*p))
                    .collect()
            })
            .unwrap_or_default();
        crate::unwind::choose(self.unwind.unwind, &exes)
    }

    /// Sizes the stack map (checked against the memory available) and
    /// `--unwind dwarf`'s copy slots before load.
    pub fn size_maps(
        &self,
        stack_map: &mut OpenMapMut,
        copies: &mut OpenMapMut,
        dwarf: bool,
    ) -> Result<()> {
        maps::size_stack_map(
            stack_map,
            self.stack_storage_size,
            self.perf_max_stack_depth,
        )?;
        maps::size_user_stack_copies(copies, dwarf)
    }
}

/// What a non-zero counter of the stack kind's failures means (the first
/// values of a stack tool's error enum); None for the tool's own.
pub fn error_note(index: u32) -> Option<&'static str> {
    Some(match E(index) {
        E::ERR_STACK_COLLISION => {
            "stacks not recorded: hash collisions in the stack map (raise --stack-storage-size)"
        }
        E::ERR_STACK_FULL => {
            "stacks not recorded: the stack map was full (raise --stack-storage-size)"
        }
        E::ERR_STACK_USER_FAULT => {
            "user stacks could not be read (no frame pointers, or paged out)"
        }
        E::ERR_STACK_OTHER => "stacks not recorded for another error",
        E::ERR_STACK_COUNTS_FULL => "not counted: the counts map was full",
        _ => return None,
    })
}

/// What a stack tool counts and how its report looks.
pub struct Spec<'a> {
    pub args: &'a StackArgs,
    pub common: &'a crate::cli::CommonArgs,
    /// -U, -K, -d.
    pub shown: &'a ShownArgs,
    /// The processes or threads named (-p, -t), whose executables
    /// `--unwind auto` looks at.
    pub ids: Option<&'a IdList>,
    /// The value's name, scale and the stack line's options.
    pub look: Look,
    pub svg: Svg,
    pub profile: Profile,
    /// What a full counts map loses: "samples not counted: ...".
    pub counts_full: &'static str,
    /// The positional DURATION: the one report after it (None: Ctrl-C).
    pub duration: Option<u64>,
    /// A report every INTERVAL seconds besides (stackcount -i), each with
    /// what the interval added.
    pub interval: Option<u64>,
    /// The time above each text report (-T).
    pub timestamp: bool,
}

/// A stack tool's pipeline: opened before anything loads, driven by the
/// lifecycle through configure, load, the loop and the report.
pub struct Stacks {
    look: Look,
    halves: Halves,
    outputs: Outputs,
    symbolizer: Symbolizer,
    keeper: ProcessKeeper,
    /// --unwind dwarf (resolved from auto): user stacks unwound here.
    dwarf: Option<Dwarf>,
    storage: u32,
    depth: u32,
    copy_size: u32,
    counts_full: &'static str,
    duration: Option<u64>,
    interval: Option<u64>,
    timestamp: bool,
    started: Option<Instant>,
    /// --containers: the names of the stacks' cgroups.
    cgroups: Option<Resolver>,
}

impl Stacks {
    /// Opens the report files (a bad path fails here, before anything
    /// loads) and chooses the unwinder.
    pub fn open(spec: Spec) -> Result<Stacks> {
        let mut look = spec.look;
        look.json = spec.common.json;
        look.folded = spec.args.folded;
        look.delimited = spec.shown.delimited;
        let halves = spec.shown.halves();
        let outputs = Outputs::open(spec.args, spec.svg, spec.profile)?;
        let dwarf = spec.args.dwarf(halves.user, spec.ids).then(|| Dwarf {
            unwinder: Unwinder::new(spec.args.perf_max_stack_depth as usize),
            stacks: StackTable::default(),
            pending: HashMap::new(),
            latest: HashMap::new(),
            latest_waker: HashMap::new(),
            sums: HashMap::new(),
            joined: look.join != Join::None,
        });
        Ok(Stacks {
            look,
            halves,
            outputs,
            symbolizer: Symbolizer::with_source_lines(false).verbose(spec.common.verbose),
            keeper: ProcessKeeper::default(),
            dwarf,
            storage: spec.args.stack_storage_size,
            depth: spec.args.perf_max_stack_depth,
            copy_size: spec.args.unwind.copy_size(),
            counts_full: spec.counts_full,
            duration: spec.duration,
            interval: spec.interval,
            timestamp: spec.timestamp,
            started: None,
            cgroups: spec.args.containers.then(Resolver::default),
        })
    }
}

impl super::Pipeline for Stacks {
    fn kind(&self) -> Option<registry::Kind> {
        Some(registry::Kind::Stack)
    }

    /// Stdout is read by a program: folded lines or JSON.
    fn machine_readable(&self) -> bool {
        self.look.json || self.look.folded
    }

    /// One report, after DURATION or at Ctrl-C; and one every interval
    /// where the tool takes one.
    fn schedule(&self) -> Option<Schedule> {
        Some(Schedule {
            duration: self.duration.map(Duration::from_secs),
            interval: self.interval.map(Duration::from_secs),
            count: None,
        })
    }

    /// Sets stackcounts.bpf.h's switches and sizes its maps.
    fn configure(&mut self, obj: &mut OpenObject) -> Result<()> {
        let dwarf = self.dwarf.is_some();
        for (name, on) in [
            ("user_stacks", self.halves.user),
            ("kernel_stacks", self.halves.kernel),
            ("dwarf_unwind", dwarf),
            // Symbolized from the stack map at the report: keep the maps.
            ("track_pids", self.halves.user && !dwarf),
            ("per_container", self.cgroups.is_some()),
        ] {
            maps::set_rodata(obj, name, &[u8::from(on)])?;
        }
        maps::set_rodata(obj, "stack_copy_size", &self.copy_size.to_ne_bytes())?;
        maps::size_stack_map(&mut open_map(obj, "stackmap")?, self.storage, self.depth)?;
        maps::size_user_stack_copies(&mut open_map(obj, "ustack_scratch")?, dwarf)?;
        if !dwarf {
            // Only dwarf's records use the ring: the smallest one.
            open_map(obj, "events")?.set_max_entries(4096)?;
        }
        Ok(())
    }

    /// Loaded: starts keeping the memory maps of the processes seen.
    fn loaded(&mut self, obj: &Object) -> Result<()> {
        if self.halves.user {
            self.symbolizer.follow_mappings();
            if let (Some(dwarf), Some(view)) = (&mut self.dwarf, self.symbolizer.mappings_view()) {
                dwarf.unwinder.follow(view);
            }
        }
        if self.halves.user && self.dwarf.is_none() {
            let seen = maps::by_name(obj, "seen_pids").context("no seen_pids map")?;
            self.keeper.watch(libbpf_rs::MapHandle::try_from(&seen)?);
        }
        self.started = Some(Instant::now());
        Ok(())
    }

    /// One record of the `events` ring (--unwind dwarf): a stack copy,
    /// unwound now, or a sample, summed.
    fn record(&mut self, data: &[u8]) -> bool {
        if let Some(d) = &mut self.dwarf {
            // A process's first stack: its memory map is kept for the
            // report, which may come after it exits.
            if let Some(pid) = d.record(data) {
                self.symbolizer.keep_process(pid);
            }
        }
        true
    }

    /// Whenever the loop wakes, while tracing: symbols loaded ahead, so
    /// that the report starts at once at Ctrl-C.
    fn idle(&mut self) {
        if self.halves.kernel {
            self.symbolizer.warm_kernel();
        }
        self.keeper.poll(&mut self.symbolizer);
    }

    /// The report: the sums drained, in BCC's order (ascending, the
    /// largest last, next to the prompt), symbolized, printed and written
    /// to the files.
    fn report(&mut self, src: &mut dyn super::Source, out: &mut Out, _: When) -> Result<()> {
        let obj = src.object();
        if self.timestamp && !self.machine_readable() {
            writeln!(out, "{}", crate::output::now_hms())?;
        }
        let traced = self.started.map_or(Duration::ZERO, |s| s.elapsed());
        let mut files = self.outputs.report(traced);
        let (mut rows, table) = match &mut self.dwarf {
            Some(d) => {
                if let Some(note) = d.unwinder.stats.note() {
                    crate::note!("{note}");
                }
                let sums = std::mem::take(&mut d.sums);
                (sums.into_iter().collect(), Some(&d.stacks))
            }
            None => {
                let counts = maps::by_name(obj, "counts").context("no counts map")?;
                let rows: Vec<(Key, u64)> = if self.look.join == Join::None {
                    let drained: Vec<(types::stack_key, Box<u64>)> = maps::drain_as(&counts)?;
                    drained
                        .into_iter()
                        .map(|(k, v)| (Key::of(&k, User::Map(k.user_stack_id)), *v))
                        .collect()
                } else {
                    let drained: Vec<(types::wake_key, Box<u64>)> = maps::drain_as(&counts)?;
                    drained
                        .into_iter()
                        .map(|(k, v)| {
                            let t = &k.target;
                            let w = &k.waker;
                            let key = Key {
                                waker: Some(Waker::of(w, User::Map(w.user_stack_id))),
                                ..Key::of(t, User::Map(t.user_stack_id))
                            };
                            (key, *v)
                        })
                        .collect()
                };
                (rows, None)
            }
        };
        rows.sort_by_key(|(k, v)| (*v, k.tgid, k.shown_id, k.cgroup_id));
        let stack_map = maps::by_name(obj, "stackmap").context("no stackmap map")?;
        let parts = resolve(
            rows.iter().map(|(k, _)| k),
            &stack_map as &dyn MapCore,
            table,
            &mut self.symbolizer,
            self.halves,
        )?;
        let lost = self.symbolizer.mappings_lost();
        if lost > 0 {
            crate::note!(
                "{lost} mapping records lost (a full side-band ring): some stacks may be [unknown]"
            );
        }
        let mut hists = report::Hists::new();
        if self.look.hists.is_some() {
            let map = maps::by_name(obj, "stack_hists").context("no stack_hists map")?;
            let drained: Vec<(types::stack_key, Box<types::hist>)> = maps::drain_as(&map)?;
            for (k, h) in drained {
                hists.insert(Key::of(&k, User::Map(k.user_stack_id)), *h);
            }
        }
        report::print(
            out,
            &self.look,
            &rows,
            &parts,
            &hists,
            Some(&mut files),
            self.cgroups.as_mut(),
        )?;
        files.finish(true)
    }

    /// The notes for the kind's failure counters.
    fn error_note(&self, index: u32) -> Option<&'static str> {
        match E(index) {
            E::ERR_STACK_COUNTS_FULL => Some(self.counts_full),
            _ => error_note(index),
        }
    }
}

fn open_map<'o>(obj: &'o mut OpenObject, name: &str) -> Result<OpenMapMut<'o>> {
    obj.maps_mut()
        .find(|m| m.name() == name)
        .with_context(|| format!("the BPF object has no map {name}"))
}

/// --unwind dwarf's state: the stacks unwound from the copies, and the
/// sums kept here rather than in the kernel.
struct Dwarf {
    unwinder: Unwinder,
    stacks: StackTable,
    /// Copies waiting for their sample: number → stack index.
    pending: HashMap<u64, u32>,
    /// Each thread's last copy: a copy whose sample never comes (an
    /// interval under -m) is dropped at the thread's next.
    latest: HashMap<u32, u64>,
    /// As `latest`, for the copies of wakers' stacks, by the thread woken.
    latest_waker: HashMap<u32, u64>,
    sums: HashMap<Key, u64>,
    /// The samples carry their waker's (offwaketime, wakeuptime).
    joined: bool,
}

// SAFETY: repr(C) structs of integers and byte arrays, valid for any bytes.
unsafe impl plain::Plain for types::stack_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::stack_sample {}
// SAFETY: as above.
unsafe impl plain::Plain for types::wake_key {}
// SAFETY: as above.
unsafe impl plain::Plain for types::hist {}

impl Dwarf {
    /// One record; returns the process of a stack copy when it is the
    /// first seen of it.
    fn record(&mut self, data: &[u8]) -> Option<u32> {
        if let Some(copy) = crate::unwind::Copy::parse(data) {
            let new = !self.unwinder.knows(copy.tgid);
            let stack = self.unwinder.unwind(copy.tgid, copy.regs, copy.stack);
            let index = self.stacks.intern(stack);
            let latest = if copy.waker {
                &mut self.latest_waker
            } else {
                &mut self.latest
            };
            if let Some(old) = latest.insert(copy.tid, copy.seq) {
                self.pending.remove(&old);
            }
            self.pending.insert(copy.seq, index);
            return new.then_some(copy.tgid);
        }
        let mut s = types::stack_sample::default();
        plain::copy_from_bytes(&mut s, data).ok()?;
        if s.kind != stack_limits::STACK_SAMPLE_KIND.0 {
            return None;
        }
        let mut user = |seq| match seq {
            0 => User::Absent,
            // Lost (the ring was full: counted there), or never sent.
            seq => self
                .pending
                .remove(&seq)
                .map_or(User::Missed, User::Unwound),
        };
        // The waker tools' samples name a waker (its comm empty where none
        // was seen: a task preempted, not woken).
        let waker = self.joined.then(|| Waker::of(&s.waker, user(s.waker_seq)));
        let key = Key {
            tgid: s.tgid,
            shown_id: if s.tid != 0 { s.tid } else { s.tgid },
            kern_stack_id: s.kern_stack_id,
            user: user(s.seq),
            comm: s.comm,
            cgroup_id: s.cgroup_id,
            waker,
            entry_caller: 0,
            dev: 0,
        };
        *self.sums.entry(key).or_default() += s.value;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dwarf(joined: bool) -> Dwarf {
        Dwarf {
            unwinder: Unwinder::new(127),
            stacks: StackTable::default(),
            pending: HashMap::new(),
            latest: HashMap::new(),
            latest_waker: HashMap::new(),
            sums: HashMap::new(),
            joined,
        }
    }

    /// A stack copy record of this process's thread `tid`, from `ip`,
    /// with no stack bytes.
    fn copy(tid: u32, seq: u64, waker: bool, ip: u64) -> Vec<u8> {
        let h = crate::skel::types::ustack_header {
            kind: if waker {
                crate::unwind::KIND_WAKER_STACK
            } else {
                crate::unwind::KIND_STACK
            },
            tid,
            tgid: std::process::id(),
            seq,
            ip,
            ..Default::default()
        };
        // SAFETY: a Plain struct of integers without padding.
        unsafe { plain::as_bytes(&h) }.to_vec()
    }

    fn sample(tid: u32, seq: u64, waker_seq: u64, value: u64) -> Vec<u8> {
        let s = types::stack_sample {
            kind: stack_limits::STACK_SAMPLE_KIND.0,
            tgid: std::process::id(),
            tid,
            kern_stack_id: -1,
            seq,
            value,
            waker_seq,
            ..Default::default()
        };
        // SAFETY: a Plain struct of integers and bytes without padding.
        unsafe { plain::as_bytes(&s) }.to_vec()
    }

    /// Two code addresses of this program, whose stacks differ.
    fn ips() -> (u64, u64) {
        (dwarf as *const () as u64, copy as *const () as u64)
    }

    #[test]
    fn samples_take_the_latest_copy_of_their_thread() {
        let mut d = dwarf(false);
        let (a, b) = ips();
        // The process's first copy names it (its maps kept from then).
        assert_eq!(d.record(&copy(7, 1, false, a)), Some(std::process::id()));
        // A later copy of the same thread replaces it: a sample names the
        // copy taken with it.
        assert_eq!(d.record(&copy(7, 2, false, b)), None);
        d.record(&sample(7, 2, 0, 5));
        // Its copy replaced, or never sent (a full ring): missed.
        d.record(&sample(7, 1, 0, 7));
        d.record(&sample(7, 9, 0, 13));
        // No user stack asked (a kernel thread).
        d.record(&sample(7, 0, 0, 11));
        // A copy serves one sample.
        d.record(&sample(7, 2, 0, 17));
        let mut sums: Vec<(User, u64)> = d.sums.iter().map(|(k, v)| (k.user, *v)).collect();
        sums.sort_by_key(|(_, v)| *v);
        assert_eq!(
            sums,
            [
                (User::Unwound(1), 5),
                (User::Absent, 11),
                (User::Missed, 7 + 13 + 17)
            ]
        );
    }

    #[test]
    fn a_wakers_copy_is_kept_apart_from_the_woken_threads_own() {
        let mut d = dwarf(true);
        let (a, b) = ips();
        d.record(&copy(7, 1, false, a));
        d.record(&copy(7, 2, true, b));
        d.record(&sample(7, 1, 2, 3));
        let (key, value) = d.sums.iter().next().expect("a sum");
        assert_eq!(*value, 3);
        assert_eq!(key.user, User::Unwound(0));
        assert_eq!(key.waker.as_ref().map(|w| w.user), Some(User::Unwound(1)));
    }
}
