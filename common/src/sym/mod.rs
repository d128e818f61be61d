//! Stack symbolization, shared by the stack tools; the formats are in
//! [`format`].
//!
//! One long-lived blazesym symbolizer serves the whole run: kernel
//! addresses through /proc/kallsyms, user addresses per process (ELF
//! symbols, DWARF file:line where present). Each process's addresses are
//! symbolized in one batch and cached, so a frame shared by thousands of
//! stacks is looked up once.

use std::collections::HashMap;
use std::rc::Rc;

use blazesym::symbolize::source::{Elf, Kernel, Process, Source};
use blazesym::symbolize::{Input, Symbolized, Symbolizer as Blaze};
use blazesym::{MaybeDefault, Pid};

mod format;
pub mod mappings;
pub use format::{
    folded_line, folded_stack, part_json, write_multi_line, Joined, Part, Side, Stack,
};

/// One symbolized address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub addr: u64,
    /// None when the address could not be symbolized.
    pub name: Option<String>,
    /// From the start of the symbol.
    pub offset: u64,
    /// The object file's name (`libc.so.6`), for user frames.
    pub module: Option<String>,
    /// `file:line`, where debug information has it.
    pub source: Option<String>,
}

impl Frame {
    /// The function name, or `[unknown]`.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("[unknown]")
    }

    /// `name` or, with `offset`, `name+0x1c` (unknown frames: the address).
    pub fn label(&self, offset: bool) -> String {
        match (&self.name, offset) {
            (Some(name), true) => format!("{name}+{:#x}", self.offset),
            (Some(name), false) => name.clone(),
            (None, true) => format!("[unknown] {:#x}", self.addr),
            (None, false) => "[unknown]".into(),
        }
    }

    /// BCC memleak's form: `name+0x1c [libc.so.6]`, then ` file:line`.
    pub fn long_label(&self) -> String {
        let mut s = self.label(true);
        if let Some(module) = &self.module {
            s.push_str(&format!(" [{module}]"));
        }
        if let Some(source) = &self.source {
            s.push(' ');
            s.push_str(source);
        }
        s
    }

    fn unknown(addr: u64) -> Frame {
        Frame {
            addr,
            name: None,
            offset: 0,
            module: None,
            source: None,
        }
    }
}

/// Names of the frames at the top of a kernel stack taken from a BPF
/// program that belong to the tracing machinery, not to the traced code.
const TRACING_FRAMES: &[&str] = &[
    "bpf_prog_",
    "bpf_trace_run",
    "__bpf_trace_",
    "__traceiter_",
    "bpf_trampoline_",
    "perf_trace_",
    "trace_call_bpf",
    "perf_trace_run_bpf_submit",
    "bpf_get_stack",
    "__bpf_get_stack",
    "trace_event_raw_event_",
    // A kprobe's and a kretprobe's: their handlers, the ftrace or int3
    // entry, and the trampoline a return came through.
    "kprobe_ftrace_handler",
    "ftrace_trampoline",
    "aggr_pre_handler",
    "pre_handler_kretprobe",
    "kprobe_int3_handler",
    "exc_int3",
    "asm_exc_int3",
    "optimized_callback",
    "kprobe_perf_func",
    "kretprobe_perf_func",
    "kprobe_dispatcher",
    "kretprobe_dispatcher",
    "__kretprobe_trampoline",
    "kretprobe_trampoline",
    "trampoline_handler",
    "rethook_",
    "arch_rethook_",
];

fn tracing_frame(f: &Frame) -> bool {
    f.name
        .as_deref()
        .is_some_and(|n| TRACING_FRAMES.iter().any(|p| n.starts_with(p)))
}

/// Drops the BPF program's own frames (and the tracepoint plumbing that
/// called it) from the top of a kernel stack. The program's frame itself
/// may bear a neighbour's name (symbols read before it was loaded): a
/// first frame followed by machinery goes with it.
pub fn trim_tracing_frames(frames: &[Rc<Frame>]) -> &[Rc<Frame>] {
    let Some(first) = frames.iter().take(2).position(|f| tracing_frame(f)) else {
        return frames;
    };
    let run = frames[first..]
        .iter()
        .take_while(|f| tracing_frame(f))
        .count();
    &frames[first + run..]
}

/// The long-lived symbolizer, with its caches.
pub struct Symbolizer {
    blaze: Blaze,
    kernel: HashMap<u64, Rc<Frame>>,
    user: HashMap<(u32, u64), Rc<Frame>>,
    /// The frames as stacks show them, by (process or KERNEL, address, is
    /// the leaf): a return address's frame is its lookup's with the byte
    /// put back, made once rather than for every stack it is in.
    shown: HashMap<(u32, u64, bool), Rc<Frame>>,
    /// Processes whose memory map is cached (see [`Symbolizer::keep_process`]).
    kept: std::collections::HashSet<u32>,
    /// Say on stderr why addresses could not be symbolized (-v).
    verbose: bool,
    /// [`Symbolizer::warm_kernel`] has run.
    warmed: bool,
    /// file:line wanted (and so DWARF read).
    lines: bool,
    /// The processes' mappings as the kernel reported them
    /// ([`Symbolizer::follow_mappings`]).
    mappings: Option<mappings::Mappings>,
    /// Side-band records lost, as last said.
    lost_said: u64,
}

impl Default for Symbolizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Symbolizer {
    pub fn new() -> Symbolizer {
        Self::with_source_lines(true)
    }

    /// A symbolizer that also looks up `file:line` (DWARF line tables) when
    /// `lines`; without, only names: less memory and time for tools that
    /// print no lines (offcputime).
    pub fn with_source_lines(lines: bool) -> Symbolizer {
        Symbolizer {
            blaze: Blaze::builder()
                .enable_code_info(lines)
                .enable_inlined_fns(false)
                .enable_demangling(true)
                .build(),
            kernel: HashMap::new(),
            user: HashMap::new(),
            shown: HashMap::new(),
            kept: Default::default(),
            verbose: false,
            warmed: false,
            lines,
            mappings: None,
            lost_said: 0,
        }
    }

    /// With -v: say on stderr why a batch could not be symbolized (a
    /// process gone, a file unreadable) instead of only showing
    /// `[unknown]` frames.
    pub fn verbose(mut self, verbose: bool) -> Symbolizer {
        self.verbose = verbose;
        self
    }

    /// Follows every process's mappings from now on, from the kernel's
    /// records (perf's side band): the processes that exec or fork from
    /// now on are symbolized after they exit, their files after they are
    /// deleted. Call it before attaching; where the side band cannot be
    /// opened, says so and carries on with /proc alone.
    pub fn follow_mappings(&mut self) {
        // BPFTOOLS_DISABLE=sideband: /proc alone, as before (to compare).
        if crate::kernel::probe::disabled("sideband") {
            return;
        }
        match mappings::Mappings::start() {
            Ok(m) => self.mappings = Some(m),
            Err(e) => crate::note!(
                "the stacks of processes that exit before the report may be [unknown]: {e:#}"
            ),
        }
    }

    /// What the side band knows, for the DWARF unwinder (None where it
    /// is not followed).
    pub fn mappings_view(&self) -> Option<mappings::View> {
        self.mappings.as_ref().map(mappings::Mappings::view)
    }

    /// Side-band records the kernel lost for a full ring since the last
    /// call, to be said.
    pub fn mappings_lost(&mut self) -> u64 {
        let total = self.mappings.as_ref().map_or(0, mappings::Mappings::lost);
        total - std::mem::replace(&mut self.lost_said, total)
    }

    /// One batch of addresses as frames; `[unknown]` where the batch or an
    /// address could not be symbolized.
    fn frames(&self, src: &Source, addrs: &[u64], what: &str) -> Vec<Frame> {
        self.frames_of(src, Input::AbsAddr(addrs), what)
    }

    fn frames_of(&self, src: &Source, input: Input<&[u64]>, what: &str) -> Vec<Frame> {
        let addrs = *input.as_inner_ref();
        let results = match self.blaze.symbolize(src, input) {
            Ok(r) => Some(r),
            Err(e) => {
                if self.verbose {
                    crate::note!("symbolizing {what}: {e}");
                }
                None
            }
        };
        addrs
            .iter()
            .enumerate()
            .map(|(i, addr)| {
                results
                    .as_ref()
                    .and_then(|r| r.get(i))
                    .map_or_else(|| Frame::unknown(*addr), |s| to_frame(*addr, s))
            })
            .collect()
    }

    /// Caches (or refreshes) process `pid`'s memory map, so that its
    /// addresses can still be symbolized after it has exited (a traced
    /// command's final report). Call it again after the process may have
    /// mapped new code.
    pub fn keep_process(&mut self, pid: u32) {
        use blazesym::symbolize::cache::{Cache, Process as CachedProcess};
        // An exiting process's map is emptied: keep the copy read before.
        if pid == 0 || crate::run::process::exiting(pid) {
            return;
        }
        let mut cache = CachedProcess::new(Pid::from(pid));
        cache.cache_perf_map = false;
        if self.blaze.cache(&Cache::Process(cache)).is_ok() {
            self.kept.insert(pid);
            // New mappings may have moved code: look everything up again.
            self.user.retain(|(p, _), _| *p != pid);
            self.shown.retain(|(p, _, _), _| *p != pid);
        }
    }

    /// Parses the kernel's symbols now (blazesym keeps them), so that a
    /// report at Ctrl-C does not start with that: call it while tracing, as
    /// often as convenient (only the first call does anything), and never
    /// before the tool's programs are loaded: symbols read earlier lack
    /// theirs, whose frames then take a neighbour's name.
    pub fn warm_kernel(&mut self) {
        if std::mem::replace(&mut self.warmed, true) {
            return;
        }
        let first = std::fs::File::open("/proc/kallsyms").ok().and_then(|f| {
            use std::io::BufRead;
            let line = std::io::BufReader::new(f).lines().next()?.ok()?;
            u64::from_str_radix(line.split_whitespace().next()?, 16).ok()
        });
        if let Some(addr) = first.filter(|a| *a != 0) {
            self.prefetch_kernel([addr]);
        }
    }

    /// Symbolizes the kernel addresses not seen before, in one batch.
    pub fn prefetch_kernel(&mut self, addrs: impl IntoIterator<Item = u64>) {
        let mut todo: Vec<u64> = addrs
            .into_iter()
            .filter(|a| !self.kernel.contains_key(a))
            .collect();
        todo.sort_unstable();
        todo.dedup();
        if todo.is_empty() {
            return;
        }
        // kallsyms only: a vmlinux with DWARF, where installed, costs
        // seconds and hundreds of MiB to parse for line numbers.
        let src = Source::Kernel(Kernel {
            vmlinux: MaybeDefault::None,
            debug_syms: false,
            ..Kernel::default()
        });
        let frames = self.frames(&src, &todo, "kernel addresses");
        for (addr, frame) in todo.iter().zip(frames) {
            self.kernel.insert(*addr, Rc::new(frame));
        }
    }

    /// Symbolizes process `pid`'s addresses not seen before, in one batch.
    /// A process that has exited gets `[unknown]` frames.
    pub fn prefetch_user(&mut self, pid: u32, addrs: impl IntoIterator<Item = u64>) {
        let mut todo: Vec<u64> = addrs
            .into_iter()
            .filter(|a| !self.user.contains_key(&(pid, *a)))
            .collect();
        todo.sort_unstable();
        todo.dedup();
        // Pid 0 would mean "this process" to blazesym.
        if todo.is_empty() || pid == 0 {
            return;
        }
        self.prefetch_mapped(pid, &mut todo);
        if todo.is_empty() {
            return;
        }
        let mut process = Process::new(Pid::from(pid));
        // Without lines, names from the symbol tables alone: DWARF would
        // cost a parse of each binary's debug info for the rare stripped
        // function it names.
        process.debug_syms = self.lines;
        // A live process's files through /proc/PID/map_files: the very
        // files mapped, in whatever mount namespace (a container's binary
        // is not at its path here). Cached memory maps outlive the
        // process, map_files does not: a kept process gone is read by
        // its paths.
        process.map_files = !self.kept.contains(&pid) || !crate::run::process::exiting(pid);
        let src = Source::Process(process);
        let frames = self.frames(&src, &todo, &format!("addresses of process {pid}"));
        for (addr, frame) in todo.iter().zip(frames) {
            self.user.insert((pid, *addr), Rc::new(frame));
        }
    }

    /// Symbolizes the addresses of `todo` that the side band places in a
    /// file of process `pid`'s, file by file, and leaves the rest in
    /// `todo`.
    fn prefetch_mapped(&mut self, pid: u32, todo: &mut Vec<u64>) {
        let Some(m) = &self.mappings else { return };
        m.sync();
        let Some(places) = m.translate(pid, todo) else {
            return;
        };
        let mut by_file: HashMap<*const mappings::MappedFile, Vec<usize>> = HashMap::new();
        for (i, place) in places.iter().enumerate() {
            if let Some((file, _)) = place {
                by_file
                    .entry(std::sync::Arc::as_ptr(file))
                    .or_default()
                    .push(i);
            }
        }
        for indexes in by_file.values() {
            let Some((file, _)) = &places[indexes[0]] else {
                continue;
            };
            // A file that could not be opened: /proc may still have it.
            let Some(path) = file.open_path() else {
                continue;
            };
            let offsets: Vec<u64> = indexes
                .iter()
                .filter_map(|i| places[*i].as_ref().map(|(_, off)| *off))
                .collect();
            let src = Source::Elf(Elf {
                debug_syms: self.lines,
                ..Elf::new(path)
            });
            let what = format!("addresses of process {pid} in {}", file.path);
            let frames = self.frames_of(&src, Input::FileOffset(&offsets), &what);
            for (i, frame) in indexes.iter().zip(frames) {
                let frame = Frame {
                    addr: todo[*i],
                    module: Some(file.name().to_string()),
                    ..frame
                };
                self.user.insert((pid, todo[*i]), Rc::new(frame));
            }
        }
        todo.retain(|a| !self.user.contains_key(&(pid, *a)));
    }

    /// The frames of a kernel stack, leaf first (prefetched or not).
    pub fn kernel(&mut self, stack: &[u64]) -> Vec<Rc<Frame>> {
        if let Some(frames) = self.shown_frames(KERNEL, stack) {
            return frames;
        }
        self.prefetch_kernel(lookup_addresses(stack));
        let cache = &self.kernel;
        let frames = resolve(stack, |a| cache.get(&a).cloned());
        self.remember(KERNEL, stack, &frames);
        frames
    }

    /// The frames of process `pid`'s user stack, leaf first (prefetched or
    /// not), cut where the walk left user space (see [`user_part`]).
    pub fn user(&mut self, pid: u32, stack: &[u64]) -> Vec<Rc<Frame>> {
        let stack = user_part(stack);
        if let Some(frames) = self.shown_frames(pid, stack) {
            return frames;
        }
        self.prefetch_user(pid, lookup_addresses(stack));
        let cache = &self.user;
        let frames = resolve(stack, |a| cache.get(&(pid, a)).cloned());
        self.remember(pid, stack, &frames);
        frames
    }

    /// A stack's frames when every one has been shown before.
    fn shown_frames(&self, owner: u32, stack: &[u64]) -> Option<Vec<Rc<Frame>>> {
        stack
            .iter()
            .enumerate()
            .map(|(i, a)| self.shown.get(&(owner, *a, i == 0)).cloned())
            .collect()
    }

    fn remember(&mut self, owner: u32, stack: &[u64], frames: &[Rc<Frame>]) {
        for ((i, a), f) in stack.iter().enumerate().zip(frames) {
            self.shown.insert((owner, *a, i == 0), f.clone());
        }
    }

    /// The frames of a user stack unwound from a copy (`--unwind dwarf`),
    /// with an `[incomplete]` frame at the root end where the walk stopped
    /// short of it: such stacks are marked, never silently shortened.
    pub fn unwound(&mut self, pid: u32, stack: &crate::unwind::Unwound) -> Vec<Rc<Frame>> {
        let mut frames = self.user(pid, &stack.addrs);
        if !stack.end.complete() {
            frames.push(Rc::new(Frame {
                name: Some(INCOMPLETE.into()),
                ..Frame::unknown(0)
            }));
        }
        frames
    }
}

/// The owner of kernel frames in [`Symbolizer`]'s cache of shown frames.
const KERNEL: u32 = u32::MAX;

/// The root-end frame of a user stack whose unwinding stopped short.
pub const INCOMPLETE: &str = "[incomplete]";

/// The highest user space address (5-level paging's 56 bits on x86_64,
/// 52-bit VAs on arm64).
#[cfg(target_arch = "x86_64")]
const USER_MAX: u64 = 0x00ff_ffff_ffff_ffff;
#[cfg(not(target_arch = "x86_64"))]
const USER_MAX: u64 = 0x000f_ffff_ffff_ffff;

/// A user stack up to its first impossible address. A frame pointer walk
/// through code built without frame pointers follows whatever the register
/// held: some kernels (6.1) return what it then reads, such as the bytes of
/// a string ("/locale/" as 0x2f656c61636f6c2f); nothing after it is a frame.
pub fn user_part(stack: &[u64]) -> &[u64] {
    let end = stack
        .iter()
        .position(|a| *a == 0 || *a > USER_MAX)
        .unwrap_or(stack.len());
    &stack[..end]
}

/// A user stack taken at a function's first instruction with its caller's
/// return address (the top of the stack there) put after the leaf, where
/// the frame pointer walk skipped it; not where the kernel put it there
/// already (Linux 6.11+ does at an entry that pushes %rbp).
pub fn insert_caller(addrs: &[u64], caller: u64) -> Vec<u64> {
    let mut out = addrs.to_vec();
    if caller != 0 && !out.is_empty() && out.get(1) != Some(&caller) {
        out.insert(1, caller);
    }
    out
}

/// The addresses to look up for a stack, leaf first. Every frame but the
/// leaf is a return address: the instruction after a call, which for a
/// call at the very end of a function (one that never returns) is already
/// in the next symbol. One byte back is inside the call.
pub fn lookup_addresses(stack: &[u64]) -> impl Iterator<Item = u64> + '_ {
    stack
        .iter()
        .enumerate()
        .map(|(i, a)| if i == 0 { *a } else { a.saturating_sub(1) })
}

/// Frames for a stack from the cache of looked-up addresses, with return
/// addresses shown as they are (the byte taken off for the lookup put back).
fn resolve(stack: &[u64], cached: impl Fn(u64) -> Option<Rc<Frame>>) -> Vec<Rc<Frame>> {
    lookup_addresses(stack)
        .zip(stack)
        .map(|(key, addr)| match cached(key) {
            Some(f) if key == *addr => f,
            Some(f) => Rc::new(Frame {
                addr: *addr,
                offset: f.offset + (addr - key),
                ..(*f).clone()
            }),
            None => Rc::new(Frame::unknown(*addr)),
        })
        .collect()
}

fn to_frame(addr: u64, s: &Symbolized) -> Frame {
    match s {
        Symbolized::Sym(sym) => Frame {
            addr,
            name: Some(sym.name.to_string()),
            offset: sym.offset as u64,
            module: sym.module.as_ref().and_then(|m| {
                std::path::Path::new(m)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            }),
            source: sym.code_info.as_ref().map(|ci| {
                let file = ci.file.to_string_lossy();
                match ci.line {
                    Some(line) => format!("{file}:{line}"),
                    None => file.into_owned(),
                }
            }),
        },
        Symbolized::Unknown(_) => Frame::unknown(addr),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A named frame at 0x1000+0x1c, for the formatting tests.
    pub(super) fn frame(name: &str) -> Rc<Frame> {
        Rc::new(Frame {
            addr: 0x1000,
            name: Some(name.into()),
            offset: 0x1c,
            module: None,
            source: None,
        })
    }

    #[test]
    fn tracing_frames_are_trimmed_from_the_top_only() {
        let frames = vec![
            frame("bpf_prog_6deef7357e7b4530_oc_btf_switch"),
            frame("bpf_trace_run4"),
            frame("__bpf_trace_sched_switch"),
            frame("__traceiter_sched_switch"),
            frame("__schedule"),
            frame("bpf_trace_run4"),
            frame("schedule"),
        ];
        let kept: Vec<&str> = trim_tracing_frames(&frames)
            .iter()
            .map(|f| f.name())
            .collect();
        assert_eq!(kept, ["__schedule", "bpf_trace_run4", "schedule"]);
        let misnamed = vec![
            frame("__stop_runtime_ptr_USER_PTR_MAX"),
            frame("bpf_trace_run5"),
            frame("cap_capable"),
        ];
        let kept = trim_tracing_frames(&misnamed);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].name(), "cap_capable");
    }

    #[test]
    fn user_stacks_end_at_an_address_outside_user_space() {
        let ascii = u64::from_le_bytes(*b"/locale/");
        assert_eq!(
            user_part(&[0x401000, 0x7f00_0000_1000, ascii, 0x401000]).len(),
            2
        );
        assert_eq!(user_part(&[0x401000, 0]).len(), 1);
        assert_eq!(user_part(&[0x401000, 0x402000]).len(), 2);
    }

    #[test]
    fn the_caller_goes_after_the_leaf_once() {
        assert_eq!(insert_caller(&[1, 3, 4], 2), [1, 2, 3, 4]);
        assert_eq!(insert_caller(&[1, 2, 3], 2), [1, 2, 3]);
        assert_eq!(insert_caller(&[1], 2), [1, 2]);
        assert_eq!(insert_caller(&[1, 3], 0), [1, 3]);
        assert!(insert_caller(&[], 2).is_empty());
    }

    #[test]
    fn unknown_frames_print_as_unknown() {
        let f = Frame::unknown(0xdead);
        assert_eq!(f.label(false), "[unknown]");
        assert_eq!(f.label(true), "[unknown] 0xdead");
        assert_eq!(frame("malloc").label(true), "malloc+0x1c");
    }

    #[test]
    fn this_process_symbolizes_its_own_functions() {
        #[inline(never)]
        fn marker_function_for_symbolization() -> u64 {
            marker_function_for_symbolization as *const () as u64
        }
        let addr = marker_function_for_symbolization();
        let mut sym = Symbolizer::new();
        // As a leaf, and as a return address one byte past the start.
        let frames = sym.user(std::process::id(), &[addr, addr + 1]);
        for f in &frames {
            assert!(
                f.name().contains("marker_function_for_symbolization"),
                "{f:?}"
            );
        }
        assert_eq!(frames[1].addr, addr + 1);
        assert_eq!(frames[1].offset, frames[0].offset + 1);
    }
}
