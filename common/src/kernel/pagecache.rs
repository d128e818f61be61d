//! The page cache's counters as cachestat and cachetop keep them
//! (bpf/include/pagecache.bpf.h): the mode each run chooses (fentry on the
//! functions BCC hooks, else kprobes on them, else the filemap tracepoints,
//! approximate), the kprobes' attachment, and the figures a reading gives.

use anyhow::{bail, Context, Result};
use libbpf_rs::{Link, OpenMapMut, OpenProgramMut, ProgramMut};

use crate::kernel::probe::{self, Hook};

/// Where each counter is kept (enum cache_counter, pagecache.h; each tool
/// checks these against its skeleton's enum when it builds).
pub const ACCESSED: usize = 0;
pub const ADDED: usize = 1;
pub const WRITE_ADDED: usize = 2;
pub const DIRTIED: usize = 3;
pub const BUFFER_DIRTIED: usize = 4;
pub const COUNTERS: usize = 5;

/// Checks, as the tool builds, that its skeleton's enum cache_counter
/// (pagecache.h) keeps each counter where this module reads it:
/// `common::page_cache_counters_match!(skel::types::cache_counter);`
#[macro_export]
macro_rules! page_cache_counters_match {
    ($counter:ty) => {
        const _: () = {
            type C = $counter;
            use $crate::kernel::pagecache as pc;
            assert!(
                C::CNT_ACCESSED.0 as usize == pc::ACCESSED
                    && C::CNT_ADDED.0 as usize == pc::ADDED
                    && C::CNT_WRITE_ADDED.0 as usize == pc::WRITE_ADDED
                    && C::CNT_DIRTIED.0 as usize == pc::DIRTIED
                    && C::CNT_BUFFER_DIRTIED.0 as usize == pc::BUFFER_DIRTIED
                    && C::CNT_MAX.0 as usize == pc::COUNTERS
            );
        };
    };
}

/// Counted as BCC counts, on the page cache functions (fentry or kprobes),
/// not approximated from the filemap tracepoints.
pub fn exact(mode: Hook) -> bool {
    matches!(mode, Hook::Fentry | Hook::Kprobe)
}

/// The mode's name in JSON: fentry, kprobe or tracepoint.
pub fn mode_name(mode: Hook) -> &'static str {
    match mode {
        Hook::Fentry => "fentry",
        Hook::Kprobe => "kprobe",
        _ => "tracepoint",
    }
}

/// What the tool says on stderr in the approximate mode.
pub fn degraded(mode: Hook) -> Option<String> {
    (!exact(mode)).then(|| {
        format!(
            "tracepoint mode ({mode}; fentry is not available): hits are \
             approximated from the page ranges of reads and faults"
        )
    })
}

/// The functions BCC hooks, in one kernel generation's names.
struct Functions {
    add: &'static str,
    accessed: &'static str,
    /// The first of these that can be traced (one is inlined on some builds).
    dirtied: &'static [&'static str],
    buffer_dirty: &'static str,
}

/// 5.16+: folios. folio_account_dirtied is inlined on many builds; its
/// caller serves.
const FOLIO_FUNCTIONS: Functions = Functions {
    add: "filemap_add_folio",
    accessed: "folio_mark_accessed",
    dirtied: &["folio_account_dirtied", "__folio_mark_dirty"],
    buffer_dirty: "mark_buffer_dirty",
};

/// Before 5.16: pages, BCC's own names.
const PAGE_FUNCTIONS: Functions = Functions {
    add: "add_to_page_cache_lru",
    accessed: "mark_page_accessed",
    dirtied: &["account_page_dirtied"],
    buffer_dirty: "mark_buffer_dirty",
};

impl Functions {
    /// The functions, with the dirtying one found, if `traceable` says
    /// every one can be traced.
    fn traceable(&self, traceable: impl Fn(&str) -> bool) -> Option<[&'static str; 4]> {
        let dirtied = self.dirtied.iter().copied().find(|f| traceable(f))?;
        [self.add, self.accessed, self.buffer_dirty]
            .iter()
            .all(|f| traceable(f))
            .then_some([self.add, self.accessed, dirtied, self.buffer_dirty])
    }
}

const TRACEPOINTS: &[&str] = &[
    "mm_filemap_add_to_page_cache",
    "writeback_dirty_folio",
    "mm_filemap_get_pages",
    "mm_filemap_map_pages",
    "mm_filemap_fault",
];

/// Kprobe mode: the functions probed (add, accessed, dirtied, buffer
/// dirtied), in their folio form or their page form.
pub struct Kprobes {
    folio: bool,
    functions: [&'static str; 4],
}

/// pagecache.bpf.h's programs, as a skeleton's handles (before load).
pub struct Programs<'a, 'obj> {
    /// add, accessed, buffer dirty, dirty: the folio functions.
    pub fentry: [&'a mut OpenProgramMut<'obj>; 4],
    /// add, accessed, dirty, buffer dirty: the page functions.
    pub page_fentry: [&'a mut OpenProgramMut<'obj>; 4],
    pub kprobe_add_folio: &'a mut OpenProgramMut<'obj>,
    pub kprobe_dirty_folio: &'a mut OpenProgramMut<'obj>,
    pub kprobe_add_page: &'a mut OpenProgramMut<'obj>,
    pub kprobe_dirty_page: &'a mut OpenProgramMut<'obj>,
    pub kprobe_accessed: &'a mut OpenProgramMut<'obj>,
    pub kprobe_buffer_dirty: &'a mut OpenProgramMut<'obj>,
    /// The tracepoint mode's, tp_btf and raw_tp.
    pub btf: Vec<&'a mut OpenProgramMut<'obj>>,
    pub raw: Vec<&'a mut OpenProgramMut<'obj>>,
    /// Per-task state: in task storage (tp_btf, fentry) or hashes by tid.
    pub storage_maps: Vec<&'a mut OpenMapMut<'obj>>,
    pub hash_maps: Vec<&'a mut OpenMapMut<'obj>>,
}

/// Chooses the mode: BCC's functions by fentry (folio names, or page names
/// before 5.16), by kprobes where fentry is missing, else the filemap
/// tracepoints (6.10+, approximate). Switches the other programs (and their
/// maps) off; returns the mode and, for kprobes, where the programs go.
pub fn choose(p: Programs) -> Result<(Hook, Option<Kprobes>)> {
    let folio_fentry = FOLIO_FUNCTIONS.traceable(probe::fentry_target);
    let page_fentry =
        folio_fentry.is_none() && PAGE_FUNCTIONS.traceable(probe::fentry_target).is_some();
    let kprobes = if folio_fentry.is_some() || page_fentry {
        None
    } else {
        match (
            FOLIO_FUNCTIONS.traceable(probe::kprobe_target),
            PAGE_FUNCTIONS.traceable(probe::kprobe_target),
        ) {
            (Some(functions), _) => Some(Kprobes {
                folio: true,
                functions,
            }),
            (None, Some(functions)) => Some(Kprobes {
                folio: false,
                functions,
            }),
            (None, None) => None,
        }
    };
    let tracepoints = folio_fentry.is_none() && !page_fentry && kprobes.is_none();
    if tracepoints {
        if let Some(missing) = TRACEPOINTS
            .iter()
            .find(|t| !probe::btf_tracepoint_exists(t))
        {
            bail!(
                "this kernel offers neither fentry nor kprobes on the page cache functions, \
                 nor the tracepoint {missing} (filemap tracepoints need Linux 6.10+)"
            );
        }
    }
    let [f_add, f_accessed, f_buffer, f_dirty] = p.fentry;
    if let Some([.., dirtied, _]) = folio_fentry {
        f_dirty.set_attach_target(0, Some(dirtied.to_string()))?;
    }
    probe::load_when(
        folio_fentry.is_some(),
        [f_add, f_accessed, f_buffer, f_dirty],
    );
    probe::load_when(page_fentry, p.page_fentry);
    let folio_k = kprobes.as_ref().is_some_and(|k| k.folio);
    let page_k = kprobes.as_ref().is_some_and(|k| !k.folio);
    probe::load_when(folio_k, [p.kprobe_add_folio, p.kprobe_dirty_folio]);
    probe::load_when(page_k, [p.kprobe_add_page, p.kprobe_dirty_page]);
    probe::load_when(
        kprobes.is_some(),
        [p.kprobe_accessed, p.kprobe_buffer_dirty],
    );
    if tracepoints {
        let mode = probe::task_state_variant(probe::TaskStateVariants {
            btf: p.btf,
            raw: p.raw,
            storage_maps: p.storage_maps,
            hash_maps: p.hash_maps,
        })?;
        return Ok((mode, None));
    }
    probe::load_when(false, p.btf.into_iter().chain(p.raw));
    // fentry programs keep per-task state in task storage, as tp_btf.
    probe::create_when(folio_fentry.is_some(), p.storage_maps)?;
    probe::create_when(folio_fentry.is_none(), p.hash_maps)?;
    let mode = if kprobes.is_some() {
        Hook::Kprobe
    } else {
        Hook::Fentry
    };
    Ok((mode, kprobes))
}

/// The kprobe programs, loaded.
pub struct KprobePrograms<'a, 'obj> {
    pub add_folio: &'a ProgramMut<'obj>,
    pub dirty_folio: &'a ProgramMut<'obj>,
    pub add_page: &'a ProgramMut<'obj>,
    pub dirty_page: &'a ProgramMut<'obj>,
    pub accessed: &'a ProgramMut<'obj>,
    pub buffer_dirty: &'a ProgramMut<'obj>,
}

impl Kprobes {
    /// Attaches the kprobe programs to the functions found.
    pub fn attach(&self, p: KprobePrograms) -> Result<Vec<Link>> {
        let (add, dirty) = if self.folio {
            (p.add_folio, p.dirty_folio)
        } else {
            (p.add_page, p.dirty_page)
        };
        let [f_add, f_accessed, f_dirty, f_buffer] = self.functions;
        [
            (add, f_add),
            (p.accessed, f_accessed),
            (dirty, f_dirty),
            (p.buffer_dirty, f_buffer),
        ]
        .into_iter()
        .map(|(prog, function)| {
            prog.attach_kprobe(false, function)
                .with_context(|| format!("attaching a kprobe to {function}"))
        })
        .collect()
    }
}

/// [`choose`] over a skeleton's `progs` and `maps` (pagecache.bpf.h's
/// programs have the same names in every tool).
#[macro_export]
macro_rules! choose_page_cache_programs {
    ($progs:expr, $maps:expr) => {{
        let p = &mut $progs;
        let m = &mut $maps;
        $crate::kernel::pagecache::choose($crate::kernel::pagecache::Programs {
            fentry: [
                &mut p.cs_fentry_add,
                &mut p.cs_fentry_accessed,
                &mut p.cs_fentry_buffer_dirty,
                &mut p.cs_fentry_dirty,
            ],
            page_fentry: [
                &mut p.cs_pfentry_add,
                &mut p.cs_pfentry_accessed,
                &mut p.cs_pfentry_dirty,
                &mut p.cs_pfentry_buffer_dirty,
            ],
            kprobe_add_folio: &mut p.cs_kprobe_add_folio,
            kprobe_dirty_folio: &mut p.cs_kprobe_dirty_folio,
            kprobe_add_page: &mut p.cs_kprobe_add_page,
            kprobe_dirty_page: &mut p.cs_kprobe_dirty_page,
            kprobe_accessed: &mut p.cs_kprobe_accessed,
            kprobe_buffer_dirty: &mut p.cs_kprobe_buffer_dirty,
            btf: vec![
                &mut p.cs_btf_add,
                &mut p.cs_btf_dirty,
                &mut p.cs_btf_get_pages,
                &mut p.cs_btf_map_pages,
                &mut p.cs_btf_fault,
            ],
            raw: vec![
                &mut p.cs_raw_add,
                &mut p.cs_raw_dirty,
                &mut p.cs_raw_get_pages,
                &mut p.cs_raw_map_pages,
                &mut p.cs_raw_fault,
            ],
            storage_maps: vec![&mut m.reads_storage, &mut m.last_added_storage],
            hash_maps: vec![&mut m.reads, &mut m.last_added],
        })
    }};
}

/// [`Kprobes::attach`] over a loaded skeleton's `progs`.
#[macro_export]
macro_rules! attach_page_cache_kprobes {
    ($kprobes:expr, $progs:expr) => {{
        let p = &$progs;
        $kprobes.attach($crate::kernel::pagecache::KprobePrograms {
            add_folio: &p.cs_kprobe_add_folio,
            dirty_folio: &p.cs_kprobe_dirty_folio,
            add_page: &p.cs_kprobe_add_page,
            dirty_page: &p.cs_kprobe_dirty_page,
            accessed: &p.cs_kprobe_accessed,
            buffer_dirty: &p.cs_kprobe_buffer_dirty,
        })
    }};
}

/// The log2 of the page size, for pagecache.bpf.h's `page_shift`.
pub fn page_shift() -> u32 {
    // SAFETY: sysconf has no preconditions.
    let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    page_size.trailing_zeros()
}

/// What a reading's counters (or an interval's) say, never negative.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
    pub dirties: u64,
    /// Pages a write dirtied that were in the cache already.
    pub write_hits: u64,
}

impl Stats {
    /// Misses are pages added to the cache except those a write added;
    /// hits are accesses that were not misses. In the exact modes, accesses
    /// are BCC's: folio_mark_accessed calls less mark_buffer_dirty calls.
    pub fn from_counters(c: &[u64; COUNTERS], exact: bool) -> Stats {
        let accesses = if exact {
            c[ACCESSED].saturating_sub(c[BUFFER_DIRTIED])
        } else {
            c[ACCESSED]
        };
        let misses = c[ADDED].saturating_sub(c[WRITE_ADDED]);
        Stats {
            hits: accesses.saturating_sub(misses),
            misses,
            dirties: c[DIRTIED],
            write_hits: c[DIRTIED].saturating_sub(c[WRITE_ADDED]),
        }
    }

    /// Hits in every read access, in percent (0 where none).
    pub fn ratio_percent(&self) -> f64 {
        percent(self.hits, self.hits + self.misses)
    }

    /// Dirtied pages that were cached already, in percent (0 where none).
    pub fn write_hit_percent(&self) -> f64 {
        percent(self.write_hits, self.dirties)
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Buffers and Cached from /proc/meminfo, in MiB.
pub fn meminfo_mb() -> Result<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/meminfo").context("reading /proc/meminfo")?;
    Ok(parse_meminfo(&text))
}

fn parse_meminfo(text: &str) -> (u64, u64) {
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
            / 1024
    };
    (field("Buffers"), field("Cached"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_never_negative() {
        let mut c = [0u64; COUNTERS];
        c[ACCESSED] = 10;
        c[ADDED] = 50;
        c[WRITE_ADDED] = 60;
        c[DIRTIED] = 7;
        let s = Stats::from_counters(&c, false);
        assert_eq!((s.hits, s.misses, s.dirties, s.write_hits), (10, 0, 7, 0));
        c[WRITE_ADDED] = 0;
        let s = Stats::from_counters(&c, false);
        assert_eq!((s.hits, s.misses, s.dirties, s.write_hits), (0, 50, 7, 7));
        assert_eq!(s.ratio_percent(), 0.0);
        assert_eq!(s.write_hit_percent(), 100.0);
        c[BUFFER_DIRTIED] = 100;
        assert_eq!(Stats::from_counters(&c, true).hits, 0);
        assert_eq!(Stats::default().write_hit_percent(), 0.0);
    }

    #[test]
    fn write_hits_are_dirtied_pages_a_write_did_not_add() {
        let mut c = [0u64; COUNTERS];
        c[ADDED] = 30;
        c[WRITE_ADDED] = 25;
        c[DIRTIED] = 100;
        let s = Stats::from_counters(&c, false);
        assert_eq!((s.misses, s.write_hits), (5, 75));
        assert_eq!(s.write_hit_percent(), 75.0);
    }

    #[test]
    fn meminfo_fields_are_read_in_mib() {
        let text = "MemTotal: 100 kB\nBuffers:          2048 kB\nCached:         1048576 kB\nSwapCached: 5 kB\n";
        assert_eq!(parse_meminfo(text), (2, 1024));
    }
}
