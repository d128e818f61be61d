//! What every tool shares, and nothing tool-specific.
//!
//! A tool's `main` is `common::run::main(|| run(Args::parse()))`; inside it the
//! tool probes hooks ([`probe`]), sets filters ([`filters`]), streams events
//! ([`events`]) and prints with [`output`].

pub mod cli;
pub mod events;
pub mod filters;
pub mod hist;
pub mod launch;
pub mod output;
pub mod probe;
pub mod run;
pub mod skel;
pub mod sym;
#[cfg(feature = "test-support")]
pub mod testing;
