//! The steps between a tool's generated skeleton and attaching it.

use std::os::fd::{AsFd, AsRawFd};

use anyhow::{Context, Result};
use libbpf_rs::skel::OpenSkel;
use libbpf_rs::{MapCore, MapFlags};

use crate::cli::CommonArgs;
use crate::probe;
use crate::run::tool_name;

/// Pulls in the skeleton that `bpf::skeleton("<tool>")` generated, as
/// module `skel`. Generated code follows libbpf-cargo's conventions, not ours.
#[macro_export]
macro_rules! skeleton {
    ($tool:literal) => {
        mod skel {
            #![allow(clippy::all, clippy::pedantic, clippy::undocumented_unsafe_blocks)]
            #![allow(non_camel_case_types, unsafe_op_in_unsafe_fn)]
            include!(concat!(env!("OUT_DIR"), "/", $tool, ".skel.rs"));
        }
    };
}

/// Loads (and so verifies) an opened skeleton, after switching off the
/// classic tracepoint programs this kernel has no tracepoint for.
/// Returns `None` for `--dry-run`, having printed the hooks; with `-v`,
/// names the hooks on stderr.
pub fn load<'obj, T: OpenSkel<'obj>>(
    mut open: T,
    common: &CommonArgs,
) -> Result<Option<T::Output>> {
    probe::autoload_existing_tracepoints(open.open_object_mut())?;
    let hooks = probe::chosen_hooks(open.open_object());
    let skel = open.load().context("loading the BPF programs")?;
    if common.dry_run {
        probe::print_dry_run(&tool_name(), &hooks);
        return Ok(None);
    }
    if common.verbose {
        eprintln!("{}: hooks: {}", tool_name(), hooks.join(", "));
    }
    Ok(Some(skel))
}

/// Puts `prog` at index 0 of a program array, where the kernel side's
/// `bpf_tail_call(ctx, &array, 0)` finds it. Tools split a loop the
/// verifier would otherwise check in every caller into such a program.
pub fn install_tail_call(array: &dyn MapCore, prog: &impl AsFd) -> Result<()> {
    let fd = prog.as_fd().as_raw_fd() as u32;
    array
        .update(&0u32.to_ne_bytes(), &fd.to_ne_bytes(), MapFlags::ANY)
        .with_context(|| {
            format!(
                "installing the tail call in {}",
                array.name().to_string_lossy()
            )
        })
}
