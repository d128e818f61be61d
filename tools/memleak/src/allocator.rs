//! The allocator: where its functions are and how they are probed.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use common::kernel::probe::UprobeLinks;
use common::usage::usage;
use libbpf_rs::{Link, ProgramMut, UprobeMultiOpts, UprobeOpts};

use crate::skel::types::alloc_fn;
use crate::skel::{MemleakProgs, MemleakSkel};
use common::probes::placement::{self, Placement};

/// The allocator's functions: name (its per-function entry program is
/// `<name>_enter`), cookie, and whether the call is followed to its return.
/// The entry program of a function, in the skeleton (one per function:
/// perf uprobes before 5.15 have no cookies).
type EntryProgram = for<'a, 'obj> fn(&'a MemleakProgs<'obj>) -> &'a ProgramMut<'obj>;

/// The allocator's functions: name, id, followed to the return (it hands
/// out a block), and its entry program.
const FUNCTIONS: &[(&str, alloc_fn, bool, EntryProgram)] = &[
    ("malloc", alloc_fn::FN_MALLOC, true, |p| &p.malloc_enter),
    ("calloc", alloc_fn::FN_CALLOC, true, |p| &p.calloc_enter),
    ("realloc", alloc_fn::FN_REALLOC, true, |p| &p.realloc_enter),
    ("reallocarray", alloc_fn::FN_REALLOCARRAY, true, |p| {
        &p.reallocarray_enter
    }),
    ("posix_memalign", alloc_fn::FN_POSIX_MEMALIGN, true, |p| {
        &p.posix_memalign_enter
    }),
    ("aligned_alloc", alloc_fn::FN_ALIGNED_ALLOC, true, |p| {
        &p.aligned_alloc_enter
    }),
    ("valloc", alloc_fn::FN_VALLOC, true, |p| &p.valloc_enter),
    ("memalign", alloc_fn::FN_MEMALIGN, true, |p| {
        &p.memalign_enter
    }),
    ("pvalloc", alloc_fn::FN_PVALLOC, true, |p| &p.pvalloc_enter),
    ("mmap", alloc_fn::FN_MMAP, true, |p| &p.mmap_enter),
    ("mremap", alloc_fn::FN_MREMAP, true, |p| &p.mremap_enter),
    ("munmap", alloc_fn::FN_MUNMAP, false, |p| &p.munmap_enter),
    ("free", alloc_fn::FN_FREE, false, |p| &p.free_enter),
];

/// One probed function of the allocator.
#[derive(Debug, Clone)]
pub struct Probe {
    /// Its entry program.
    entry: EntryProgram,
    pub symbol: String,
    fn_id: alloc_fn,
    /// Followed to its return (it hands out a block).
    returns: bool,
    /// The function's start in the file.
    start: u64,
    /// Where its entry probe goes.
    pub place: Placement,
}

impl Probe {
    fn entry_offset(&self) -> usize {
        (self.start + self.place.offset) as usize
    }
}

/// Where the probes go in one allocator library.
#[derive(Debug, Clone)]
pub struct Plan {
    pub lib: PathBuf,
    pub probes: Vec<Probe>,
    /// Functions not probed, and why (noted with -v).
    pub skipped: Vec<String>,
}

/// Finds the allocator's functions in `lib` and where each probe goes.
/// malloc and free must be there; a function whose code is another's
/// (an alias) is probed once, as the first.
pub fn plan(lib: &Path, prefix: &str) -> Result<Plan> {
    let names: Vec<String> = FUNCTIONS
        .iter()
        .map(|(name, ..)| format!("{prefix}{name}"))
        .collect();
    let found = placement::lookup(lib, &names);
    let mut plan = Plan {
        lib: lib.to_path_buf(),
        probes: Vec::new(),
        skipped: Vec::new(),
    };
    for ((name, fn_id, returns, entry), (symbol, function)) in
        FUNCTIONS.iter().zip(names.into_iter().zip(found))
    {
        let Some(function) = function else {
            if *name == "malloc" || *name == "free" {
                bail!(
                    "{} defines no {symbol}: is it the allocator?",
                    lib.display()
                );
            }
            plan.skipped
                .push(format!("{symbol}: not in {}", lib.display()));
            continue;
        };
        if let Some(same) = plan.probes.iter().find(|p| p.start == function.file_offset) {
            plan.skipped.push(format!(
                "{symbol}: the same code as {}, probed once",
                same.symbol
            ));
            continue;
        }
        // An entry-only probe may go past a prologue that would be
        // single-stepped; one followed to the return stays at the entry,
        // where the return address is taken.
        let place = if *returns {
            Placement {
                offset: 0,
                why: "at the entry (it has a return probe too)".into(),
            }
        } else {
            placement::entry_only(lib, &function)
        };
        plan.probes.push(Probe {
            entry: *entry,
            symbol,
            fn_id: *fn_id,
            returns: *returns,
            start: function.file_offset,
            place,
        });
    }
    Ok(plan)
}

/// Attaches `plan`'s probes for `pid`, the best way the kernel offers:
/// a session link (return probes only for calls followed) and an entry
/// link; entry and return links; or a uprobe and uretprobe per function.
pub fn attach(
    skel: &mut MemleakSkel,
    pid: u32,
    plan: &Plan,
    links: UprobeLinks,
) -> Result<Vec<Link>> {
    let context = || {
        format!(
            "attaching to the allocator in {} (pid {pid})",
            plan.lib.display()
        )
    };
    let p = &skel.progs;
    let multi = |prog: &ProgramMut, probes: &[&Probe], at_entry: bool, retprobe: bool, session| {
        let opts = UprobeMultiOpts {
            offsets: probes
                .iter()
                .map(|p| {
                    if at_entry {
                        p.entry_offset()
                    } else {
                        p.start as usize
                    }
                })
                .collect(),
            cookies: probes.iter().map(|p| u64::from(p.fn_id.0)).collect(),
            retprobe,
            session,
            ..Default::default()
        };
        prog.attach_uprobe_multi_with_opts(pid as i32, &plan.lib, "", opts)
            .with_context(context)
    };
    let followed: Vec<&Probe> = plan.probes.iter().filter(|p| p.returns).collect();
    let entry_only: Vec<&Probe> = plan.probes.iter().filter(|p| !p.returns).collect();
    match links {
        UprobeLinks::Session => Ok(vec![
            multi(&p.um_session, &followed, false, false, true)?,
            multi(&p.um_enter, &entry_only, true, false, false)?,
        ]),
        UprobeLinks::Multi => {
            let all: Vec<&Probe> = plan.probes.iter().collect();
            // The return link first: an entry without its return would
            // leave a pending call behind.
            Ok(vec![
                multi(&p.um_exit, &followed, false, true, false)?,
                multi(&p.um_enter, &all, true, false, false)?,
            ])
        }
        UprobeLinks::Single => {
            let mut out = Vec::new();
            for probe in &plan.probes {
                if probe.returns {
                    // Every function but posix_memalign returns the block.
                    let exit = if probe.fn_id == alloc_fn::FN_POSIX_MEMALIGN {
                        &p.posix_memalign_exit
                    } else {
                        &p.malloc_exit
                    };
                    let opts = UprobeOpts {
                        retprobe: true,
                        ..Default::default()
                    };
                    out.push(
                        exit.attach_uprobe_with_opts(
                            pid as i32,
                            &plan.lib,
                            probe.start as usize,
                            opts,
                        )
                        .with_context(context)?,
                    );
                }
                out.push(
                    (probe.entry)(p)
                        .attach_uprobe_with_opts(
                            pid as i32,
                            &plan.lib,
                            probe.entry_offset(),
                            UprobeOpts::default(),
                        )
                        .with_context(context)?,
                );
            }
            Ok(out)
        }
    }
}

/// What -v and --dry-run say about the probes.
pub fn describe(plan: &Plan, links: UprobeLinks) -> Vec<String> {
    let how = match links {
        UprobeLinks::Session => "a session uprobe_multi link (no return probe for a call not followed) and an entry uprobe_multi link",
        UprobeLinks::Multi => "uprobe_multi links, entry and return",
        UprobeLinks::Single => "a uprobe (and uretprobe) per function",
    };
    let mut lines = vec![format!(
        "{} functions in {}: {how}",
        plan.probes.len(),
        plan.lib.display()
    )];
    lines.extend(
        plan.probes
            .iter()
            .map(|p| format!("{}: probe {}", p.symbol, p.place.why)),
    );
    lines.extend(plan.skipped.iter().cloned());
    lines
}

/// The file a process maps its libc from, through /proc/PID/root so that a
/// process in another mount namespace (a container) is found too.
pub fn libc_of(pid: u32) -> Result<PathBuf> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .with_context(|| format!("reading /proc/{pid}/maps: is process {pid} running?"))?;
    let path = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            let name = Path::new(p)
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            name == "libc.so.6"
                || (name.starts_with("libc-") && name.ends_with(".so"))
                || name == "libc.so"
        })
        .with_context(|| {
            format!("process {pid} maps no libc (statically linked?): name its allocator with -O")
        })?;
    Ok(PathBuf::from(format!("/proc/{pid}/root{path}")))
}

/// Fails with a usage error unless `path` is an ELF object that defines
/// the allocator's malloc (`-O`, with `-S`'s prefix).
pub fn check_object(path: &Path, prefix: &str) -> Result<()> {
    let bytes = std::fs::read(path).map_err(|e| usage(format!("-O {}: {e}", path.display())))?;
    if !bytes.starts_with(b"\x7fELF") {
        return Err(usage(format!(
            "-O {}: not an ELF object (give the allocator's shared library or executable)",
            path.display()
        )));
    }
    let wanted = format!("{prefix}malloc");
    if placement::lookup(path, std::slice::from_ref(&wanted))[0].is_none() {
        return Err(usage(format!(
            "-O {}: defines no {wanted} (is -S right?)",
            path.display()
        )));
    }
    Ok(())
}
