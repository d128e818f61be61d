//! What every tool shares, and nothing tool-specific.
//!
//! A tool implements [`run::lifecycle::Tool`] (its options, variant choice
//! and report) and exports `Entry::of::<Tool>()`, whose `main` the tool's
//! binary calls; the lifecycle opens, configures, loads, attaches, loops and
//! reports in one order for every tool. Around it: the kinds of tool
//! ([`kinds`]: event, histogram, stack, interval table), hook probing ([`kernel::probe`]),
//! the shared filters ([`kernel::filters`]), map helpers ([`kernel::maps`]),
//! symbolization ([`sym`]) and output ([`output`]).

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

// The shared headers' constants (bpf/common.bpf.c), as generated types.
skeleton!("common");

pub mod cli;
pub mod errnos;
pub mod export;
pub mod kernel;
pub mod kinds;
pub mod output;
pub mod probes;
pub mod run;
pub mod signals;
pub mod sym;
pub mod unwind;
pub mod usage;

/// The paths README's "Adding a tool" names, compiled with the unit tests
/// so that the recipe cannot name what no longer exists (xtask checks that
/// README names no `common::` path missing from this list). Not a doc test:
/// rustdoc's build of this crate for one cost CI half a minute.
#[cfg(test)]
#[allow(unused_imports)]
mod readme_paths {
    use crate::cli::TopArgs;
    use crate::event_record;
    use crate::kernel::fileio::Variant;
    use crate::kernel::probe::load_when;
    use crate::kinds::event::{columns, Stamps};
    use crate::kinds::histogram::read_maps;
    use crate::kinds::stack::{ShownArgs, Spec, StackArgs};
    use crate::kinds::table::{Deltas, Entry as TableEntry, Spec as TableSpec};
    use crate::probes::plan::{self, Hooks};
    use crate::run::lifecycle::{Entry, Tool};
}
