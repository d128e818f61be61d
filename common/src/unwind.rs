//! User stacks unwound in user space (`--unwind dwarf`): the BPF side sends
//! the user registers and a copy of the top of the user stack
//! (bpf/include/ustack.bpf.h); here framehop walks that copy with the
//! target's `.eh_frame` tables, so code built without frame pointers
//! (Debian's libc, most distribution binaries, Rust release builds) still
//! yields its callers.
//!
//! Tables are read once per file (device and inode) and shared by every
//! process that maps it. A process's modules are listed at its first stack,
//! and again when a stack starts in code that was mapped later (dlopen):
//! from the kernel's side-band records where the tool follows them
//! ([`crate::sym::mappings`]: a process gone by the time its first stack
//! is read, or whose program was deleted, still has them), else from its
//! memory map, while it is alive.

use std::collections::HashMap;
use std::ops::{Deref, Range};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{Error as WalkError, ExplicitModuleSectionInfo, Module, Unwinder as _};
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol};

use crate::sym::mappings::{parse_maps_line, FileId, MappedFile, Region, View};

/// How user stacks are walked (`--unwind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Frame pointers, in the kernel (BCC's way; cheap).
    Fp,
    /// A copy of the stack unwound here with the binaries' .eh_frame.
    Dwarf,
    /// dwarf when the target's executable was built without frame
    /// pointers, else fp.
    Auto,
}

/// The stack tools' `--unwind` and `--stack-copy-size`.
#[derive(clap::Args, Debug, Clone)]
pub struct UnwindArgs {
    /// How user stacks are walked: fp (frame pointers, in the kernel),
    /// dwarf (a copy of the stack unwound with the binaries' .eh_frame:
    /// also through code built without frame pointers; costlier), auto
    /// (dwarf where a traced executable has no frame pointers)
    #[arg(long, value_enum, value_name = "HOW", default_value = "fp")]
    pub unwind: Mode,
    /// With --unwind dwarf: bytes of user stack copied at each event;
    /// frames beyond are cut, and such stacks marked and counted
    #[arg(long, value_name = "BYTES", default_value_t = 16384,
          value_parser = clap::value_parser!(u32).range(256..=MAX_COPY as i64))]
    pub stack_copy_size: u32,
}

impl UnwindArgs {
    /// The copy size the BPF side takes: whole words.
    pub fn copy_size(&self) -> u32 {
        self.stack_copy_size.next_multiple_of(8)
    }
}

/// A stack copy's header (ustack.h); `len` bytes of stack from sp up
/// follow it.
type Header = crate::skel::types::ustack_header;
use crate::skel::types::ustack_limits as Limits;

// SAFETY: a repr(C) struct of integers, valid for any bytes.
unsafe impl plain::Plain for Header {}

/// The header's size: where the stack bytes start.
pub const HEADER: usize = std::mem::size_of::<Header>();
/// The record kind of a stack copy (the first u32 of a record).
pub const KIND_STACK: u32 = Limits::USTACK_KIND.0;
/// A waker's stack copy (offwaketime, wakeuptime).
pub const KIND_WAKER_STACK: u32 = Limits::USTACK_WAKER_KIND.0;
/// The largest `--stack-copy-size`.
pub const MAX_COPY: u32 = Limits::USTACK_MAX.0;

/// One stack copy from the ring buffer.
#[derive(Debug)]
pub struct Copy<'a> {
    /// The thread whose later record uses it: its own, or (a waker's copy)
    /// the thread woken.
    pub tid: u32,
    /// A waker's copy (`USTACK_WAKER_KIND`).
    pub waker: bool,
    pub tgid: u32,
    /// The BPF side's number for this copy, which later records name.
    pub seq: u64,
    pub regs: Regs,
    pub stack: &'a [u8],
}

/// The user registers an unwind starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Regs {
    pub ip: u64,
    pub sp: u64,
    pub bp: u64,
}

impl<'a> Copy<'a> {
    /// Parses a `KIND_STACK` record; None for anything else or a short one.
    pub fn parse(data: &'a [u8]) -> Option<Copy<'a>> {
        let mut h = Header::default();
        plain::copy_from_bytes(&mut h, data).ok()?;
        if h.kind != KIND_STACK && h.kind != KIND_WAKER_STACK {
            return None;
        }
        Some(Copy {
            tid: h.tid,
            waker: h.kind == KIND_WAKER_STACK,
            tgid: h.tgid,
            seq: h.seq,
            regs: Regs {
                ip: h.ip,
                sp: h.sp,
                bp: h.bp,
            },
            stack: data.get(HEADER..HEADER + h.len as usize)?,
        })
    }
}

/// How an unwind ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum End {
    /// At the root of the stack (`_start`, a thread's start).
    Complete,
    /// At the depth limit (--perf-max-stack-depth), as frame pointer
    /// stacks are cut.
    DepthLimit,
    /// The next frame lies beyond the copied bytes (--stack-copy-size, or
    /// a stack page that was not resident).
    Truncated,
    /// In code without unwind tables (JIT code, the vDSO, a process gone
    /// before its tables were read), where the frame pointer guess failed.
    NoTables,
    /// The tables led nowhere (corrupt stack or tables).
    Failed,
}

impl End {
    pub fn complete(self) -> bool {
        matches!(self, End::Complete | End::DepthLimit)
    }
}

/// An unwound user stack: addresses leaf first (the first is the
/// instruction pointer, the others return addresses, as the kernel's
/// stack maps give them).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Unwound {
    pub addrs: Vec<u64>,
    pub end: End,
}

/// Counts of how unwinds ended, for the report's note.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub complete: u64,
    pub truncated: u64,
    pub no_tables: u64,
    pub failed: u64,
}

impl Stats {
    fn count(&mut self, end: End) {
        match end {
            End::Complete | End::DepthLimit => self.complete += 1,
            End::Truncated => self.truncated += 1,
            End::NoTables => self.no_tables += 1,
            End::Failed => self.failed += 1,
        }
    }

    /// One line for stderr when some stacks were not unwound to their
    /// root; None when all were.
    pub fn note(&self) -> Option<String> {
        let bad = self.truncated + self.no_tables + self.failed;
        if bad == 0 {
            return None;
        }
        let mut why = Vec::new();
        if self.truncated > 0 {
            why.push(format!(
                "{} reached the end of the stack copy (raise --stack-copy-size)",
                self.truncated
            ));
        }
        if self.no_tables > 0 {
            why.push(format!(
                "{} went through code without unwind tables",
                self.no_tables
            ));
        }
        if self.failed > 0 {
            why.push(format!("{} failed in the tables", self.failed));
        }
        Some(format!(
            "{bad} of {} user stacks not unwound to their root, marked [incomplete]: {}",
            bad + self.complete,
            why.join(", ")
        ))
    }
}

/// Bytes of a mapped file: one section's, shared with the file's others.
#[derive(Clone)]
pub struct Bytes {
    file: Arc<memmap2::Mmap>,
    range: Range<usize>,
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.file[self.range.clone()]
    }
}

/// One file's unwind sections, and how its segments map file offsets to
/// addresses.
struct Tables {
    sections: ExplicitModuleSectionInfo<Bytes>,
    /// (file offset, virtual address, file size) of each loadable segment.
    segments: Vec<(u64, u64, u64)>,
    /// .eh_frame or .debug_frame present.
    has_tables: bool,
}

impl Tables {
    fn read(file: &std::fs::File) -> Result<Tables> {
        // SAFETY: a read-only private mapping; a file truncated under us
        // would fault, as it would for the process that maps it too.
        let map = Arc::new(unsafe { memmap2::Mmap::map(file) }?);
        let elf = object::File::parse(&map[..]).context("not an ELF file")?;
        let bytes = |name: &str| -> Option<(Range<u64>, Bytes)> {
            let s = elf.section_by_name(name)?;
            let (off, size) = s.file_range()?;
            let range = off as usize..(off + size) as usize;
            map.get(range.clone())?;
            Some((
                s.address()..s.address() + s.size(),
                Bytes {
                    file: map.clone(),
                    range,
                },
            ))
        };
        let text = bytes(".text");
        let eh_frame = bytes(".eh_frame");
        let eh_frame_hdr = bytes(".eh_frame_hdr");
        let debug_frame = bytes(".debug_frame");
        let got = elf
            .section_by_name(".got")
            .map(|s| s.address()..s.address() + s.size());
        let has_tables = eh_frame.is_some() || debug_frame.is_some();
        let segments = elf
            .segments()
            .map(|s| {
                let (off, size) = s.file_range();
                (off, s.address(), size)
            })
            .collect();
        let sections = ExplicitModuleSectionInfo {
            base_svma: 0,
            text_svma: text.as_ref().map(|t| t.0.clone()),
            text: text.map(|t| t.1),
            got_svma: got,
            eh_frame_svma: eh_frame.as_ref().map(|t| t.0.clone()),
            eh_frame: eh_frame.map(|t| t.1),
            eh_frame_hdr_svma: eh_frame_hdr.as_ref().map(|t| t.0.clone()),
            eh_frame_hdr: eh_frame_hdr.map(|t| t.1),
            debug_frame: debug_frame.map(|t| t.1),
            stubs_svma: None,
            stub_helper_svma: None,
            unwind_info: None,
            text_segment_svma: None,
            text_segment: None,
        };
        Ok(Tables {
            sections,
            segments,
            has_tables,
        })
    }

    /// The load bias of a mapping of this file at `start` from file
    /// offset `offset`: the address of the file's virtual address 0.
    fn bias(&self, start: u64, offset: u64) -> Option<u64> {
        // Each loadable segment is mapped from its page-aligned offset; two
        // may share a page (lld packs them), so the exact start comes first.
        let (p_offset, p_vaddr, _) = self
            .segments
            .iter()
            .find(|(o, _, _)| o & !0xfff == offset)
            .or_else(|| {
                self.segments
                    .iter()
                    .find(|(o, _, size)| offset >= o & !0xfff && offset < o + size.max(&1))
            })?;
        // The mapping's start shows the segment's page-aligned address.
        let vaddr_at_start = p_vaddr.checked_sub(p_offset.checked_sub(offset)?)?;
        start.checked_sub(vaddr_at_start)
    }
}

/// One executable mapping of a process.
struct Mapped {
    range: Range<u64>,
    has_tables: bool,
}

/// A process's modules.
struct Process {
    unwinder: UnwinderX86_64<Bytes>,
    mapped: Vec<Mapped>,
    listed: Instant,
}

impl Process {
    fn covers(&self, addr: u64) -> Option<&Mapped> {
        self.mapped.iter().find(|m| m.range.contains(&addr))
    }
}

/// Unwinds user stack copies; one for the whole run.
pub struct Unwinder {
    files: HashMap<FileId, Option<Arc<Tables>>>,
    /// The side band's mappings, where the tool follows them.
    mappings: Option<View>,
    processes: HashMap<u32, Process>,
    cache: CacheX86_64,
    pub stats: Stats,
    /// The deepest stack kept (--perf-max-stack-depth).
    max_depth: usize,
}

/// How often a process's memory map may be listed again for a stack that
/// starts outside every known module.
const RELIST: Duration = Duration::from_secs(1);

impl Unwinder {
    pub fn new(max_depth: usize) -> Unwinder {
        Unwinder {
            files: HashMap::new(),
            mappings: None,
            processes: HashMap::new(),
            cache: CacheX86_64::new(),
            stats: Stats::default(),
            max_depth,
        }
    }

    /// Whether process `pid`'s modules have been listed.
    pub fn knows(&self, pid: u32) -> bool {
        self.processes.contains_key(&pid)
    }

    /// Lists modules from the side band's records from now on
    /// ([`crate::sym::Symbolizer::mappings_view`]).
    pub fn follow(&mut self, mappings: View) {
        self.mappings = Some(mappings);
    }

    fn list(&mut self, pid: u32) -> Process {
        let regions = self
            .mappings
            .as_ref()
            .and_then(|m| m.regions(pid))
            .unwrap_or_else(|| {
                let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
                maps.lines()
                    .filter_map(parse_maps_line)
                    .map(|m| Region {
                        range: m.start..m.end,
                        pgoff: m.pgoff,
                        file: Arc::new(MappedFile::unopened(m.path, (m.dev, m.ino))),
                    })
                    .collect()
            });
        let mut unwinder = UnwinderX86_64::new();
        let mut mapped = Vec::new();
        for r in regions {
            let tables = self.tables(pid, &r);
            let module = tables.as_ref().and_then(|t| {
                let bias = t.bias(r.range.start, r.pgoff)?;
                Some(Module::new(
                    r.file.path.clone(),
                    r.range.clone(),
                    bias,
                    t.sections.clone(),
                ))
            });
            mapped.push(Mapped {
                range: r.range.clone(),
                has_tables: module.is_some() && tables.is_some_and(|t| t.has_tables),
            });
            if let Some(module) = module {
                unwinder.add_module(module);
            }
        }
        Process {
            unwinder,
            mapped,
            listed: Instant::now(),
        }
    }

    fn tables(&mut self, pid: u32, r: &Region) -> Option<Arc<Tables>> {
        self.files
            .entry(r.file.id)
            .or_insert_with(|| {
                // The file the side band holds open; else map_files, which
                // reaches the very file mapped (in another mount namespace,
                // or deleted since) while the process lives; the path is
                // the fallback.
                if let Some(file) = r.file.file() {
                    return Tables::read(file).ok().map(Arc::new);
                }
                let by_map = format!(
                    "/proc/{pid}/map_files/{:x}-{:x}",
                    r.range.start, r.range.end
                );
                let file = std::fs::File::open(by_map)
                    .or_else(|_| std::fs::File::open(format!("/proc/{pid}/root{}", r.file.path)))
                    .ok()?;
                Tables::read(&file).ok().map(Arc::new)
            })
            .clone()
    }

    /// Unwinds one copy of process `pid`'s stack.
    pub fn unwind(&mut self, pid: u32, regs: Regs, stack: &[u8]) -> Unwound {
        let relist = match self.processes.get(&pid) {
            None => true,
            Some(p) => p.covers(regs.ip).is_none() && p.listed.elapsed() >= RELIST,
        };
        if relist {
            let process = self.list(pid);
            self.processes.insert(pid, process);
        }
        let process = &self.processes[&pid];
        let mut read = |addr: u64| -> Result<u64, ()> {
            let at = addr.checked_sub(regs.sp).ok_or(())? as usize;
            let bytes = stack.get(at..at.checked_add(8).ok_or(())?).ok_or(())?;
            Ok(u64::from_le_bytes(bytes.try_into().map_err(|_| ())?))
        };
        let mut frames = process.unwinder.iter_frames(
            regs.ip,
            UnwindRegsX86_64::new(regs.ip, regs.sp, regs.bp),
            &mut self.cache,
            &mut read,
        );
        let mut addrs = Vec::new();
        let end = loop {
            if addrs.len() >= self.max_depth {
                break End::DepthLimit;
            }
            match frames.next() {
                Ok(Some(frame)) => addrs.push(frame.address()),
                Ok(None) => break End::Complete,
                Err(WalkError::CouldNotReadStack(_)) => break End::Truncated,
                Err(_) => {
                    let last = addrs.last().copied().unwrap_or(regs.ip);
                    let tables = process.covers(last).is_some_and(|m| m.has_tables);
                    break if tables { End::Failed } else { End::NoTables };
                }
            }
        };
        // A walk that left the tables for the frame pointer guess and read
        // past the copy still ended in code without tables.
        let end = match end {
            End::Truncated if addrs.iter().any(|a| process.covers(*a).is_none()) => End::NoTables,
            e => e,
        };
        self.stats.count(end);
        Unwound { addrs, end }
    }
}

/// Whether an executable was built with frame pointers, judged from its
/// functions' code: true when at least 90% of them hold the frame setup
/// `mov %rsp,%rbp`. Optimizing compilers move it into the body, past the
/// fast path, so it is looked for anywhere in the function; code without
/// frame pointers has no use for it. Left out: functions of fewer than 16
/// bytes (thunks, stubs) and the C runtime's own, which the program's
/// flags do not build. (90%, not half: a Rust release build's own code has
/// none, but Rust's standard library, linked in, is built with them.)
pub fn has_frame_pointers(path: &Path) -> Result<bool> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    // SAFETY: a read-only private mapping of a file only read here.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .with_context(|| format!("reading {}", path.display()))?;
    let elf =
        object::File::parse(&map[..]).with_context(|| format!("{}: not ELF", path.display()))?;
    let text = elf
        .section_by_name(".text")
        .with_context(|| format!("{}: no .text section", path.display()))?;
    let code = text.data()?;
    let mut symbols: Vec<_> = elf.symbols().collect();
    if symbols.is_empty() {
        symbols = elf.dynamic_symbols().collect();
    }
    let (mut with, mut all) = (0u32, 0u32);
    for s in symbols {
        if s.kind() != object::SymbolKind::Text
            || s.size() < 16
            || s.name().is_ok_and(|n| C_RUNTIME.contains(&n))
        {
            continue;
        }
        let Some(at) = s.address().checked_sub(text.address()) else {
            continue;
        };
        let end = (at + s.size()).min(code.len() as u64);
        let Some(body) = code.get(at as usize..end as usize) else {
            continue;
        };
        all += 1;
        if body.windows(3).any(|w| w == [0x48, 0x89, 0xe5]) {
            with += 1;
        }
    }
    if all == 0 {
        bail!("{}: no function symbols to judge by", path.display());
    }
    Ok(with * 10 >= all * 9)
}

/// Functions of crt1.o, crti.o and crtbegin.o, linked into every C program.
const C_RUNTIME: &[&str] = &[
    "_start",
    "_init",
    "_fini",
    "deregister_tm_clones",
    "register_tm_clones",
    "__do_global_dtors_aux",
    "frame_dummy",
];

/// Resolves `--unwind` for the executables of the traced processes:
/// true for dwarf. `auto` picks dwarf when one of them was built without
/// frame pointers (or cannot be judged), and says on stderr what it chose.
pub fn choose(mode: Mode, executables: &[std::path::PathBuf]) -> bool {
    match mode {
        Mode::Fp => false,
        Mode::Dwarf => true,
        Mode::Auto if executables.is_empty() => {
            crate::note!("--unwind auto: no process named (-p): frame pointers (fp)");
            false
        }
        Mode::Auto => {
            for exe in executables {
                let why = match has_frame_pointers(exe) {
                    Ok(true) => continue,
                    Ok(false) => format!("{} has no frame pointers", exe.display()),
                    Err(e) => format!("{e:#}"),
                };
                crate::note!("--unwind auto: {why}: unwinding with .eh_frame (dwarf)");
                return true;
            }
            let names: Vec<String> = executables
                .iter()
                .map(|e| e.display().to_string())
                .collect();
            crate::note!(
                "--unwind auto: {} built with frame pointers: frame pointers (fp)",
                names.join(", ")
            );
            false
        }
    }
}

/// A process's executable, for [`choose`]: its path where it can be read,
/// else the /proc link (which opens the same file).
pub fn executable_of(pid: u32) -> std::path::PathBuf {
    let link = std::path::PathBuf::from(format!("/proc/{pid}/exe"));
    match std::fs::read_link(&link) {
        Ok(path) if path.exists() => path,
        _ => link,
    }
}

/// Interned unwound stacks: each unique stack once, named by its index.
#[derive(Default)]
pub struct StackTable {
    index: HashMap<Unwound, u32>,
    stacks: Vec<Unwound>,
}

impl StackTable {
    pub fn intern(&mut self, stack: Unwound) -> u32 {
        if let Some(i) = self.index.get(&stack) {
            return *i;
        }
        let i = self.stacks.len() as u32;
        self.stacks.push(stack.clone());
        self.index.insert(stack, i);
        i
    }

    pub fn get(&self, i: u32) -> Option<&Unwound> {
        self.stacks.get(i as usize)
    }
}

/// Copies whose stacks wait, by number, for a later report (memleak: each
/// allocation's stack, copied at its call's entry, kept while the
/// allocation is outstanding), not for one sample as the stack kind's.
pub struct Kept {
    pub unwinder: Unwinder,
    pub stacks: StackTable,
    /// By copy number: the unwound stack's index, and the report it came
    /// before (copies whose use is gone are dropped after one).
    by_seq: HashMap<u64, (u32, u64)>,
    reports: u64,
}

impl Kept {
    /// Stacks of up to `max_depth` frames, each without its first (the
    /// probed function's entry: a stack starts at its caller, as a frame
    /// pointer stack taken at the return does).
    pub fn new(max_depth: usize) -> Kept {
        Kept {
            unwinder: Unwinder::new(max_depth + 1),
            stacks: StackTable::default(),
            by_seq: HashMap::new(),
            reports: 0,
        }
    }

    pub fn record(&mut self, copy: Copy) {
        let mut stack = self.unwinder.unwind(copy.tgid, copy.regs, copy.stack);
        if !stack.addrs.is_empty() {
            stack.addrs.remove(0);
        }
        let index = self.stacks.intern(stack);
        self.by_seq.insert(copy.seq, (index, self.reports));
    }

    /// The unwound stack of copy `seq`, if it arrived.
    pub fn stack_of(&self, seq: u64) -> Option<u32> {
        self.by_seq.get(&seq).map(|(i, _)| *i)
    }

    /// After a report: keeps the copies still in use (`live`) and those too
    /// recent to have been reported; the unwinder's note, if any.
    pub fn prune(&mut self, live: &std::collections::HashSet<u64>) -> Option<String> {
        let reports = self.reports;
        self.by_seq
            .retain(|seq, (_, taken)| *taken == reports || live.contains(seq));
        self.reports += 1;
        self.unwinder.stats.note()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies are found by number; after a report, only the copies still
    /// in use and those of the report's own interval are kept.
    #[test]
    fn kept_copies_live_while_in_use() {
        let mut kept = Kept::new(8);
        let copy = |seq, ip| Copy {
            tid: 1,
            waker: false,
            tgid: std::process::id(),
            seq,
            regs: Regs { ip, sp: 0, bp: 0 },
            stack: &[],
        };
        kept.record(copy(1, 0x1000));
        kept.record(copy(2, 0x2000));
        assert!(kept.stack_of(1).is_some() && kept.stack_of(2).is_some());
        assert_eq!(kept.stack_of(3), None);
        // The first report: both arrived before it, kept whatever is live.
        kept.prune(&[1].into());
        kept.record(copy(3, 0x3000));
        assert!(kept.stack_of(2).is_some());
        // The second: 2 was not live and is a report old; 1 is live; 3 is
        // this interval's.
        kept.prune(&[1].into());
        assert!(kept.stack_of(1).is_some());
        assert_eq!(kept.stack_of(2), None);
        assert!(kept.stack_of(3).is_some());
        kept.prune(&[].into());
        assert_eq!((kept.stack_of(1), kept.stack_of(3)), (None, None));
    }

    #[test]
    fn records_parse() {
        let mut r = vec![0u8; HEADER + 16];
        r[0..4].copy_from_slice(&KIND_STACK.to_ne_bytes());
        r[4..8].copy_from_slice(&7u32.to_ne_bytes());
        r[8..12].copy_from_slice(&5u32.to_ne_bytes());
        r[12..16].copy_from_slice(&16u32.to_ne_bytes());
        r[16..24].copy_from_slice(&9u64.to_ne_bytes());
        r[24..32].copy_from_slice(&0x401000u64.to_ne_bytes());
        r[32..40].copy_from_slice(&0x7ff0u64.to_ne_bytes());
        let c = Copy::parse(&r).unwrap();
        assert_eq!((c.tid, c.tgid, c.seq, c.stack.len()), (7, 5, 9, 16));
        assert_eq!(c.regs.sp, 0x7ff0);
        // A length past the record's end is refused, not trusted.
        r[12..16].copy_from_slice(&17u32.to_ne_bytes());
        assert!(Copy::parse(&r).is_none());
    }

    /// This test binary (debug, frame pointers or not) unwinds its own
    /// stack from a copy of it: the walk reaches this test's function and
    /// the test harness's frames above it.
    #[test]
    #[inline(never)]
    #[cfg(target_arch = "x86_64")]
    fn own_stack_unwinds_through_this_function() {
        let (regs, stack) = capture();
        let mut unwinder = Unwinder::new(127);
        let got = unwinder.unwind(std::process::id(), regs, &stack);
        let mut sym = crate::sym::Symbolizer::new();
        let frames = sym.user(std::process::id(), &got.addrs);
        let names: Vec<&str> = frames.iter().map(|f| f.name()).collect();
        assert!(
            names
                .iter()
                .any(|n| n.contains("own_stack_unwinds_through_this_function")),
            "{names:?} {:?}",
            got.end
        );
        assert!(got.addrs.len() > 5, "{names:?}");
    }

    /// Registers and 64 KiB of stack at the call, as the BPF side takes them.
    #[inline(never)]
    #[cfg(target_arch = "x86_64")]
    fn capture() -> (Regs, Vec<u8>) {
        let (ip, sp, bp): (u64, u64, u64);
        // SAFETY: reads three registers into locals; no memory is touched.
        unsafe {
            std::arch::asm!("lea {}, [rip]", "mov {}, rsp", "mov {}, rbp",
                out(reg) ip, out(reg) sp, out(reg) bp);
        }
        // Up to the end of the stack's mapping, as the BPF side stops at
        // the first unreadable page.
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let top = maps
            .lines()
            .filter_map(|l| {
                let (start, end) = l.split_whitespace().next()?.split_once('-')?;
                let start = u64::from_str_radix(start, 16).ok()?;
                let end = u64::from_str_radix(end, 16).ok()?;
                (start..end).contains(&sp).then_some(end)
            })
            .next()
            .expect("the stack is mapped");
        let mut stack = vec![0u8; (top - sp).min(64 * 1024) as usize & !7];
        for (i, chunk) in stack.chunks_mut(8).enumerate() {
            // SAFETY: these words lie in the mapping that holds sp, between
            // sp and its end; read_volatile keeps the reads.
            let word = unsafe { std::ptr::read_volatile((sp as *const u64).add(i)) };
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        (Regs { ip, sp, bp }, stack)
    }
}
