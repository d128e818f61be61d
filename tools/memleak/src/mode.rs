//! User mode (a process's allocator, by uprobes) or kernel mode (the kmem
//! tracepoints): the flags that pick one, and the programs each loads.

use std::ffi::OsString;

use anyhow::Result;
use common::kernel::filters::Filters;
use common::kernel::probe::{self, UprobeLinks};
use common::usage::usage;

use crate::skel::OpenMemleakProgs;
use crate::{allocator, Args};

/// Checks the flags that choose and shape the mode; returns the command
/// to start (-c), split at spaces.
pub fn check(args: &Args) -> Result<Option<Vec<OsString>>> {
    let command: Option<Vec<OsString>> = args
        .command
        .as_ref()
        .map(|c| c.split_whitespace().map(OsString::from).collect());
    if command.as_ref().is_some_and(|c| c.is_empty()) {
        return Err(usage("-c: the command is empty"));
    }
    if let (Some(min), Some(max)) = (args.min_size, args.max_size) {
        if min > max {
            return Err(usage(format!(
                "-z {min} is above -Z {max}: nothing could be counted"
            )));
        }
    }
    if args.percpu && (args.pid.is_some() || command.is_some()) {
        return Err(usage(
            "-P traces per-CPU allocations of the kernel: it does not go with -p or -c",
        ));
    }
    if args.stacks.unwind.unwind == common::unwind::Mode::Dwarf
        && args.pid.is_none()
        && command.is_none()
    {
        return Err(usage(
            "--unwind dwarf unwinds user stacks: it needs -p or -c (kernel stacks need no copy)",
        ));
    }
    if let Some(obj) = &args.obj {
        allocator::check_object(obj, &args.symbols_prefix)?;
    }
    // The uprobes go per process, so -p needs no kernel filter; the
    // policy for missing processes is the shared one.
    Filters::pids(&args.pid).check()?;
    Ok(command)
}

/// Loads the user mode's uprobe programs for the way they attach
/// (`links`), or the kernel mode's tracepoint programs (the per-CPU ones
/// only with -P).
pub fn choose_programs(p: &mut OpenMemleakProgs, user_mode: Option<UprobeLinks>, percpu: bool) {
    let kernel = user_mode.is_none();
    probe::load_when(
        kernel,
        [
            &mut p.ml_kmalloc,
            &mut p.ml_kfree,
            &mut p.ml_cache_alloc,
            &mut p.ml_cache_free,
            &mut p.ml_page_alloc,
            &mut p.ml_page_free,
        ],
    );
    probe::load_when(
        kernel && percpu,
        [&mut p.ml_percpu_alloc, &mut p.ml_percpu_free],
    );
    let (session, multi) = (
        user_mode == Some(UprobeLinks::Session),
        user_mode == Some(UprobeLinks::Multi),
    );
    probe::load_when(session, [&mut p.um_session]);
    probe::load_when(session || multi, [&mut p.um_enter]);
    probe::load_when(multi, [&mut p.um_exit]);
    probe::load_when(
        user_mode == Some(UprobeLinks::Single),
        [
            &mut p.malloc_enter,
            &mut p.calloc_enter,
            &mut p.realloc_enter,
            &mut p.reallocarray_enter,
            &mut p.posix_memalign_enter,
            &mut p.aligned_alloc_enter,
            &mut p.valloc_enter,
            &mut p.memalign_enter,
            &mut p.pvalloc_enter,
            &mut p.mmap_enter,
            &mut p.mremap_enter,
            &mut p.munmap_enter,
            &mut p.free_enter,
            &mut p.malloc_exit,
            &mut p.posix_memalign_exit,
        ],
    );
}
