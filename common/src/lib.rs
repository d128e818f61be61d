//! What every tool shares, and nothing tool-specific.
//!
//! A tool implements [`lifecycle::Tool`] (its options, variant choice and
//! report) and its `main` is `common::lifecycle::main::<Tool>()`; the
//! lifecycle opens, configures, loads, attaches, loops and reports in one
//! order for every tool. Around it: hook probing ([`probe`]), the shared
//! filters ([`filters`]), map helpers ([`maps`]), histograms ([`hist`]),
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
pub mod export;
pub mod kernel;
pub mod kinds;
pub mod output;
pub mod run;
pub mod signals;
pub mod stacks;
pub mod usage;
