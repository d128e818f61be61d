//! The report: stacks read once, symbolized in batches, and printed as
//! BCC's multi-line stacks, folded lines, JSON, or an SVG flame graph.

use std::collections::HashMap;
use std::io::Write;

use anyhow::Result;
use common::export::pprof;
use common::kernel::maps;
use common::kinds::stack as stacks;
use common::output::{c_string, escape, Out};
use common::stacks::sym::{self, Stack, Symbolizer};
use common::stacks::unwind::StackTable;
use serde_json::json;

use crate::skel::{self, types};
use crate::Args;

pub use stacks::{Key, User};

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
                        tgid: k.tgid,
                        shown_id: k.tid,
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
    for ((k, ns), (kernel, user)) in entries.iter().zip(&parts) {
        let us = *ns / 1000;
        let comm = c_string(&k.comm);
        let shown = escape(comm.as_bytes());
        let stack = Stack {
            kernel,
            user,
            comm: &shown,
            pid: k.shown_id,
            delimited: args.delimited,
            offsets: args.offset,
            annotate: false,
        };
        files.add(
            &stack,
            us,
            k.tgid,
            &[*ns as i64],
            &[
                pprof::Label::Str("comm", &comm),
                pprof::Label::Num("pid", k.tgid.into()),
                pprof::Label::Num("tid", k.shown_id.into()),
            ],
        );
        if args.common.json {
            out.json(&json!({
                "tid": k.shown_id,
                "pid": k.tgid,
                "comm": comm,
                "us": us,
                "kernel_stack": sym::part_json(kernel, args.offset),
                "user_stack": sym::part_json(user, args.offset),
            }))?;
        } else if args.stacks.folded {
            writeln!(out, "{}", sym::folded_line(&stack, us))?;
        } else {
            sym::write_multi_line(out, &stack, us)?;
        }
    }
    files.finish(true)
}
