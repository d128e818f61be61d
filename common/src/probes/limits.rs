//! bpf/trace.h's limits, read off the types generated from the BPF
//! object's BTF, so that they cannot drift from the kernel side's.

use super::skel::types;

/// The length of the array a function borrows (the function is never
/// called).
const fn len<S, T, const N: usize>(_: fn(&S) -> &[T; N]) -> usize {
    N
}

pub const STRS: usize = len(|e: &types::tr_event| &e.str_addrs);
pub const STR_MAX: u32 = (len(|e: &types::tr_event| &e.strs) / STRS) as u32;
pub const RECORD_MAX: usize = len(|e: &types::tr_event| &e.record);
pub const TERMS: usize = len(|p: &types::tr_probe| &p.terms);
pub const STACK_DEPTH: u32 = len(|e: &types::tr_event| &e.kstack) as u32;
pub const AGG_VALS: usize = len(|p: &types::tr_probe| &p.aggs);
