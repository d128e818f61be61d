//! The report: stacks read once, symbolized in batches, and printed as
//! BCC's multi-line stacks, folded lines, JSON, or an SVG flame graph.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::rc::Rc;

use anyhow::Result;
use common::export::pprof;
use common::kernel::maps;
use common::kinds::stack as stacks;
use common::output::{c_string, escape, Out};
use common::stacks::sym::{self, Part, Stack, Symbolizer};
use common::stacks::unwind::StackTable;
use serde_json::json;

use crate::skel::{self, types};
use crate::Args;

/// One stack's half as the output wants it: absent when not asked for or
/// not applicable, missed on a stack map error, else symbolized frames.
pub fn part(
    id: i32,
    wanted: bool,
    stacks: &HashMap<i32, Vec<u64>>,
    frames: impl FnOnce(&[u64]) -> Vec<Rc<sym::Frame>>,
) -> Part {
    if !wanted {
        return Part::Absent;
    }
    match stacks.get(&id) {
        Some(addrs) => Part::Frames(frames(addrs)),
        None if id == -1 => Part::Absent,
        None => Part::Missed,
    }
}

/// Where a sum's user stack is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum User {
    /// In the kernel's stack map (-1: none).
    Map(i32),
    /// None wanted (a kernel thread, -K).
    Absent,
    /// Its copy was lost (--unwind dwarf).
    Missed,
    /// Unwound from a copy: its index in the stack table.
    Unwound(u32),
}

/// What off-CPU time is summed by.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub tid: u32,
    pub tgid: u32,
    pub kern_stack_id: i32,
    pub user: User,
    pub comm: [i8; 16],
}

pub fn print(
    args: &Args,
    mut files: stacks::Report,
    skel_maps: &skel::OffcputimeMaps,
    dwarf: Option<(HashMap<Key, u64>, &StackTable)>,
    out: &mut Out,
    symbolizer: &mut Symbolizer,
) -> Result<()> {
    // Summed in the kernel, or (--unwind dwarf) here.
    let (mut entries, table): (Vec<(Key, u64)>, Option<&StackTable>) = match dwarf {
        Some((sums, table)) => (sums.into_iter().collect(), Some(table)),
        None => {
            let drained: Vec<(types::oc_key, Box<u64>)> = maps::drain_as(&skel_maps.info)?;
            let entries = drained
                .into_iter()
                .map(|(k, v)| {
                    let key = Key {
                        tid: k.tid,
                        tgid: k.tgid,
                        kern_stack_id: k.kern_stack_id,
                        user: User::Map(k.user_stack_id),
                        comm: k.comm,
                    };
                    (key, *v)
                })
                .collect();
            (entries, None)
        }
    };
    // BCC's order: ascending, the largest last (next to the prompt).
    entries.sort_by_key(|(k, v)| (*v, k.tgid, k.tid));

    // Read every stack once, then symbolize in batches: the kernel's
    // addresses together, each process's together.
    let mut stacks: HashMap<i32, Vec<u64>> = HashMap::new();
    for (k, _) in &entries {
        let user = match k.user {
            User::Map(id) => id,
            _ => -1,
        };
        for id in [k.kern_stack_id, user] {
            if id >= 0 && !stacks.contains_key(&id) {
                if let Some(addrs) = maps::read_stack(&skel_maps.stackmap, id)? {
                    stacks.insert(id, addrs);
                }
            }
        }
    }
    let kernel_ids: HashSet<i32> = entries.iter().map(|(k, _)| k.kern_stack_id).collect();
    symbolizer.prefetch_kernel(
        kernel_ids
            .iter()
            .filter_map(|id| stacks.get(id))
            .flat_map(|s| sym::lookup_addresses(s)),
    );
    let mut by_process: HashMap<u32, HashSet<User>> = HashMap::new();
    for (k, _) in &entries {
        by_process.entry(k.tgid).or_default().insert(k.user);
    }
    for (tgid, users) in &by_process {
        let addrs = users.iter().filter_map(|u| match u {
            User::Map(id) => stacks.get(id).map(Vec::as_slice),
            User::Unwound(i) => table.and_then(|t| t.get(*i)).map(|s| s.addrs.as_slice()),
            _ => None,
        });
        symbolizer.prefetch_user(
            *tgid,
            addrs.flat_map(|s| sym::lookup_addresses(sym::user_part(s))),
        );
    }

    for (k, ns) in &entries {
        let us = *ns / 1000;
        let kernel = part(k.kern_stack_id, !args.user_stacks_only, &stacks, |a| {
            sym::trim_tracing_frames(&symbolizer.kernel(a)).to_vec()
        });
        let want_user = !args.kernel_stacks_only;
        let user = match (k.user, table) {
            (User::Map(id), _) => part(id, want_user, &stacks, |a| symbolizer.user(k.tgid, a)),
            _ if !want_user => Part::Absent,
            (User::Unwound(i), Some(t)) => match t.get(i) {
                Some(stack) => Part::Frames(symbolizer.unwound(k.tgid, stack)),
                None => Part::Missed,
            },
            (User::Absent, _) => Part::Absent,
            _ => Part::Missed,
        };
        let comm = c_string(&k.comm);
        let shown = escape(comm.as_bytes());
        let stack = Stack {
            kernel: &kernel,
            user: &user,
            comm: &shown,
            pid: k.tid,
            delimited: args.delimited,
            offsets: args.offset,
        };
        files.add(
            &stack,
            us,
            k.tgid,
            &[*ns as i64],
            &[
                pprof::Label::Str("comm", &comm),
                pprof::Label::Num("pid", k.tgid.into()),
                pprof::Label::Num("tid", k.tid.into()),
            ],
        );
        if args.common.json {
            out.json(&json!({
                "tid": k.tid,
                "pid": k.tgid,
                "comm": comm,
                "us": us,
                "kernel_stack": sym::part_json(&kernel, args.offset),
                "user_stack": sym::part_json(&user, args.offset),
            }))?;
        } else if args.stacks.folded {
            writeln!(out, "{}", sym::folded_line(&stack, us))?;
        } else {
            sym::write_multi_line(out, &stack, us)?;
        }
    }
    files.finish(true)
}
