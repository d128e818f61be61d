//! The allocator: where its functions are and how they are probed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use common::note;
use common::run::usage;
use libbpf_rs::skel::Skel;
use libbpf_rs::{Link, UprobeOpts};

use crate::skel::MemleakSkel;
use crate::Args;

/// The allocator's functions: name, entry program, return program.
const FUNCTIONS: &[(&str, &str, Option<&str>)] = &[
    ("malloc", "malloc_enter", Some("malloc_exit")),
    ("calloc", "calloc_enter", Some("malloc_exit")),
    ("realloc", "realloc_enter", Some("malloc_exit")),
    ("reallocarray", "reallocarray_enter", Some("malloc_exit")),
    (
        "posix_memalign",
        "posix_memalign_enter",
        Some("posix_memalign_exit"),
    ),
    ("aligned_alloc", "aligned_alloc_enter", Some("malloc_exit")),
    ("valloc", "valloc_enter", Some("malloc_exit")),
    ("memalign", "memalign_enter", Some("malloc_exit")),
    ("pvalloc", "pvalloc_enter", Some("malloc_exit")),
    ("mmap", "mmap_enter", Some("malloc_exit")),
    ("munmap", "munmap_enter", None),
    ("mremap", "mremap_enter", Some("malloc_exit")),
    ("free", "free_enter", None),
];

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
    let found = bytes
        .windows(wanted.len() + 2)
        .any(|w| w[0] == 0 && w[w.len() - 1] == 0 && &w[1..w.len() - 1] == wanted.as_bytes());
    if !found {
        return Err(usage(format!(
            "-O {}: defines no {wanted} (is -S right?)",
            path.display()
        )));
    }
    Ok(())
}

/// Attaches the allocator's entry and return probes in `lib` for `pid`.
/// Functions the library lacks are skipped (noted with -v); malloc and
/// free must be there.
pub fn attach(skel: &mut MemleakSkel, pid: u32, lib: &Path, args: &Args) -> Result<Vec<Link>> {
    let mut links = Vec::new();
    for (func, enter, exit) in FUNCTIONS {
        let symbol = format!("{}{func}", args.symbols_prefix);
        // An entry-only probe may go past a prologue that would be
        // single-stepped (placement.rs); one with a return probe stays at
        // the entry, where the return address is taken.
        let place = match exit {
            None => crate::placement::entry_only(lib, &symbol),
            Some(_) => crate::placement::Placement {
                offset: 0,
                why: "at the entry (it has a return probe too)".into(),
            },
        };
        if args.common.verbose {
            note!("{symbol}: probe {}", place.why);
        }
        let mut attach = |prog_name: &str, retprobe: bool| -> Result<Link> {
            let prog = skel
                .object_mut()
                .progs_mut()
                .find(|p| p.name().to_string_lossy() == prog_name)
                .with_context(|| format!("no program {prog_name}"))?;
            let opts = UprobeOpts {
                retprobe,
                func_name: Some(symbol.clone()),
                ..Default::default()
            };
            let offset = if retprobe { 0 } else { place.offset };
            Ok(prog.attach_uprobe_with_opts(pid as i32, lib, offset as usize, opts)?)
        };
        // The return probe first: an entry without its return would leave
        // sizes behind.
        let result = exit
            .map(|x| attach(x, true))
            .transpose()
            .and_then(|ret| Ok((ret, attach(enter, false)?)));
        match result {
            Ok((ret, entry)) => {
                links.extend(ret);
                links.push(entry);
            }
            Err(e) if *func != "malloc" && *func != "free" => {
                if args.common.verbose {
                    note!("{symbol} not traced in {}: {e:#}", lib.display());
                }
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("attaching to {symbol} in {} (pid {pid})", lib.display())
                })
            }
        }
    }
    Ok(links)
}
