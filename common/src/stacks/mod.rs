//! Stacks: symbolization ([`sym`], one long-lived blazesym symbolizer,
//! the multi-line and folded formats) and user stacks unwound from copies
//! without frame pointers ([`unwind`]).

pub mod sym;
pub mod unwind;
