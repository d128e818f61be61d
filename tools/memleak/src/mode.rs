//! User mode (a process's allocator, by uprobes) or kernel mode (the kmem
//! tracepoints): the flags that pick one, and the programs each loads.

use std::ffi::OsString;

use anyhow::Result;
use common::filters::Filters;
use common::probe::UprobeLinks;
use common::run::usage;
use libbpf_rs::OpenObject;

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
/// (`links`), or the kernel mode's tracepoint programs (`ml_`; the per-CPU
/// ones only with -P).
pub fn choose_programs(obj: &mut OpenObject, user_mode: Option<UprobeLinks>, percpu: bool) {
    for mut prog in obj.progs_mut() {
        let name = prog.name().to_string_lossy().into_owned();
        let keep = match user_mode {
            Some(links) => allocator::programs(links).contains(&name.as_str()),
            None => name.starts_with("ml_") && (percpu || !name.starts_with("ml_percpu")),
        };
        prog.set_autoload(keep);
    }
}
