//! User mode (a process's allocator, by uprobes) or kernel mode (the kmem
//! tracepoints): the flags that pick one, and the programs each loads.

use std::ffi::OsString;

use anyhow::Result;
use common::kernel::filters::Filters;
use common::kernel::probe::UprobeLinks;
use common::usage::usage;
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
/// (`links`), or the kernel mode's tracepoint programs (the per-CPU ones
/// only with -P): each known by its section, as the way is a hook kind.
pub fn choose_programs(open: &mut OpenObject, user_mode: Option<UprobeLinks>, percpu: bool) {
    for mut prog in open.progs_mut() {
        let section = prog.section().to_string_lossy().into_owned();
        let wanted = match user_mode {
            None => {
                section.starts_with("tracepoint/kmem/")
                    || (percpu && section.starts_with("tracepoint/percpu/"))
            }
            Some(UprobeLinks::Session) => ["uprobe.session", "uprobe.multi"].contains(&&*section),
            Some(UprobeLinks::Multi) => ["uprobe.multi", "uretprobe.multi"].contains(&&*section),
            Some(UprobeLinks::Single) => ["uprobe", "uretprobe"].contains(&&*section),
        };
        prog.set_autoload(wanted);
    }
}
