//! The report: the samples by stack, as BCC's multi-line stacks, folded
//! lines, JSON, an SVG flame graph or a pprof profile.

use std::collections::HashMap;
use std::io::Write;

use anyhow::Result;
use common::export::pprof;
use common::kernel::maps;
use common::kinds::stack::{self as stacks, Key, User};
use common::output::{c_string, escape, Out};
use common::stacks::sym::{self, Stack, Symbolizer};
use common::stacks::unwind::StackTable;
use serde_json::json;

use crate::skel::{self, types};
use crate::Args;

pub struct Context<'a> {
    pub args: &'a Args,
    /// The CPU time a sample stands for, where known (pprof's `cpu`).
    pub ns_per_sample: Option<u64>,
}

pub fn print(
    cx: &Context,
    mut files: stacks::Report,
    skel_maps: &skel::ProfileMaps,
    dwarf: Option<(HashMap<Key, u64>, &StackTable)>,
    out: &mut Out,
    symbolizer: &mut Symbolizer,
) -> Result<()> {
    let args = cx.args;
    // Counted in the kernel, or (--unwind dwarf) here.
    let (mut entries, table): (Vec<(Key, u64)>, Option<&StackTable>) = match dwarf {
        Some((counts, table)) => (counts.into_iter().collect(), Some(table)),
        None => {
            let drained: Vec<(types::pr_key, Box<u64>)> = maps::drain_as(&skel_maps.counts)?;
            let entries = drained
                .into_iter()
                .map(|(k, v)| {
                    let key = Key {
                        tgid: k.pid,
                        shown_id: if k.tid != 0 { k.tid } else { k.pid },
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
    // BCC's order: ascending, the most sampled last (next to the prompt).
    entries.sort_by_key(|(k, v)| (*v, k.tgid, k.shown_id));
    let parts = stacks::resolve(
        entries.iter().map(|(k, _)| k),
        &skel_maps.stackmap,
        table,
        symbolizer,
        stacks::Halves {
            kernel: !args.user_stacks_only,
            user: !args.kernel_stacks_only,
        },
    )?;
    for ((k, samples), (kernel, user)) in entries.iter().zip(&parts) {
        let comm = c_string(&k.comm);
        let shown = escape(comm.as_bytes());
        let stack = Stack {
            kernel,
            user,
            comm: &shown,
            pid: k.shown_id,
            delimited: args.delimited,
            offsets: false,
            annotate: args.annotations,
        };
        let mut values = Vec::with_capacity(2);
        if let Some(ns) = cx.ns_per_sample {
            values.push((*samples * ns) as i64);
        }
        values.push(*samples as i64);
        let mut labels = vec![
            pprof::Label::Str("comm", &comm),
            pprof::Label::Num("pid", k.tgid.into()),
        ];
        if args.tid.is_some() {
            labels.push(pprof::Label::Num("tid", k.shown_id.into()));
        }
        files.add(&stack, *samples, k.tgid, &values, &labels);
        if args.common.json {
            let mut o = json!({
                "pid": k.tgid,
                "comm": comm,
                "samples": samples,
                "kernel_stack": sym::part_json(kernel, false),
                "user_stack": sym::part_json(user, false),
            });
            if args.tid.is_some() {
                o["tid"] = k.shown_id.into();
            }
            out.json(&o)?;
        } else if args.stacks.folded {
            writeln!(out, "{}", sym::folded_line(&stack, *samples))?;
        } else {
            sym::write_multi_line(out, &stack, *samples)?;
        }
    }
    files.finish(true)
}
