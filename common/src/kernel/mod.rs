//! The kernel side: which hooks this kernel offers and how a tool picks its
//! variants ([`probe`]), maps ([`maps`]), the shared filters ([`filters`]),
//! tracefs ([`tracefs`]).

pub mod cgroups;
pub mod disks;
pub mod enums;
pub mod fileio;
pub mod filters;
pub mod maps;
pub mod perf;
pub mod probe;
pub mod sideband;
pub mod syscalls;
pub mod tcp;
pub mod tracefs;
