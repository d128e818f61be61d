//! The report: outstanding allocations grouped by stack, ranked, printed
//! as BCC's stacks, folded lines or JSON.

use std::collections::HashMap;
use std::io::Write;

use anyhow::Result;
use common::export::pprof;
use common::kernel::{cgroups, maps};
use common::kinds::stack as stacks;
use common::note;
use common::output::{escape, now_hms, Out};
use common::run::lifecycle::When;
use common::run::process;
use common::sym;
use common::unwind::Kept as Copies;
use serde_json::json;

use crate::skel::{types, MemleakSkel};
use crate::{Args, Memleak, SortBy};

/// A report's stacks: outstanding bytes and allocations per process and stack.
#[derive(Default)]
struct Group {
    bytes: u64,
    count: u64,
    allocs: Vec<(u64, u64)>,
}

/// The stacks grouped by process and stack: the kernel's stack map id, or
/// with copies (--unwind dwarf) the unwound stack's index; -1 for none.
fn collect(
    args: &Args,
    skel: &MemleakSkel,
    mut copies: Option<&mut Copies>,
) -> Result<HashMap<(u32, i32), Group>> {
    let mut groups: HashMap<(u32, i32), Group> = HashMap::new();
    // Copies are summed here: -C's in-kernel totals are per stack map id.
    if args.combined_only && copies.is_none() {
        let entries: Vec<(types::combined_key, types::combined)> =
            maps::entries_as(&skel.maps.combined)?;
        for (k, v) in entries {
            if v.count > 0 {
                let g = groups.entry((k.tgid, k.stack_id)).or_default();
                g.bytes += v.bytes;
                g.count += v.count;
            }
        }
        return Ok(groups);
    }
    let older_ns = args.older.saturating_mul(1_000_000);
    let now = common::output::monotonic_ns();
    let entries: Vec<(types::alloc_key, types::alloc_info)> = maps::entries_as(&skel.maps.allocs)?;
    let mut live = std::collections::HashSet::new();
    for (k, info) in entries {
        let stack = match &copies {
            Some(c) => {
                live.insert(info.seq);
                c.stack_of(info.seq).map_or(-1, |i| i as i32)
            }
            None => info.stack_id,
        };
        if now.saturating_sub(info.ts_ns) <= older_ns && !args.combined_only {
            continue;
        }
        let g = groups.entry((info.tgid, stack)).or_default();
        g.bytes += info.size;
        g.count += 1;
        if args.show_allocs {
            g.allocs.push((k.addr, info.size));
        }
    }
    if let Some(c) = copies.as_mut() {
        if let Some(note) = c.prune(&live) {
            common::note!("{note}");
        }
    }
    Ok(groups)
}

/// A process's name: remembered while it ran (it may have exited by the
/// last report), or read now.
fn comm_of(comms: &HashMap<u32, String>, pid: u32) -> String {
    comms
        .get(&pid)
        .cloned()
        .or_else(|| process::comm(pid))
        .unwrap_or_else(|| format!("pid-{pid}"))
}

/// What a non-zero counter of the kernel side's `errors` map means.
pub fn error_note(index: u32) -> Option<&'static str> {
    use types::memleak_error as E;
    // The stack map's first (`or` would evaluate the match, and its
    // `return None`, before looking).
    if let Some(note) = stacks::error_note(index) {
        return Some(note);
    }
    Some(match E(index) {
        E::ERR_ALLOCS_FULL => "allocations not tracked: the allocation map was full",
        E::ERR_COMBINED_FULL => "allocations not totalled for -C: the stack totals map was full",
        _ => return None,
    })
}

/// Prints one report (with -v how long it took); --svg's and --pprof's
/// files get every stack, the screen the top ones.
pub fn print(m: &mut Memleak, skel: &MemleakSkel, out: &mut Out, when: When) -> Result<()> {
    let started = std::time::Instant::now();
    let Memleak {
        args,
        pids,
        comms,
        symbolizer,
        copies,
        outputs,
        started: traced,
        ..
    } = m;
    let mut files = outputs.report(traced.elapsed());
    let groups = collect(args, skel, copies.as_mut())?;
    let table = copies.as_ref().map(|c| &c.stacks);
    let mut ranked: Vec<(&(u32, i32), &Group)> = groups.iter().collect();
    ranked.sort_by_key(|(k, g)| {
        let primary = match args.sort {
            SortBy::Size => g.bytes,
            SortBy::Count => g.count,
        };
        std::cmp::Reverse((primary, g.count, g.bytes, k.1))
    });
    let shown = ranked.len().min(args.top as usize);
    // The files have every stack; the printed report the top ones.
    let wanted = if files.wanted() {
        &ranked[..]
    } else {
        &ranked[..shown]
    };

    let mut stacks: HashMap<i32, Vec<u64>> = HashMap::new();
    for ((_, id), _) in wanted {
        let addrs = match table {
            Some(t) => u32::try_from(*id)
                .ok()
                .and_then(|i| t.get(i))
                .map(|s| s.addrs.clone()),
            None => maps::read_stack(&skel.maps.stack_traces, *id)?,
        };
        if let Some(addrs) = addrs {
            stacks.insert(*id, addrs);
        }
    }
    let user_mode = !pids.is_empty();
    for ((pid, id), _) in wanted {
        if let Some(s) = stacks.get(id) {
            if user_mode {
                symbolizer.prefetch_user(*pid, sym::lookup_addresses(sym::user_part(s)));
            } else {
                symbolizer.prefetch_kernel(sym::lookup_addresses(s));
            }
        }
    }
    let mut part_of = |pid: u32, id: i32| -> sym::Part {
        if let Some(unwound) = table.and_then(|t| t.get(u32::try_from(id).ok()?)) {
            return sym::Part::Frames(symbolizer.unwound(pid, unwound));
        }
        match stacks.get(&id) {
            Some(s) if user_mode => sym::Part::Frames(symbolizer.user(pid, s)),
            Some(s) => sym::Part::Frames(sym::trim_tracing_frames(&symbolizer.kernel(s)).to_vec()),
            None => sym::Part::Missed,
        }
    };
    // --containers: each process's cgroup, named while it lives.
    let cgroup_of: HashMap<u32, (String, Option<(u64, cgroups::Names)>)> = ranked
        .iter()
        .filter(|_| args.stacks.containers)
        .map(|((pid, _), _)| {
            let found = cgroups::of_pid(*pid);
            let label = match &found {
                Some((id, n)) => escape(cgroups::shown(*id, Some(n)).as_bytes()).into_owned(),
                None => "exited".to_string(),
            };
            (*pid, (label, found))
        })
        .collect();
    let container_of = |pid: u32| cgroup_of.get(&pid).map(|(label, _)| label.clone());
    // A stack is the user half (-p, -c) or the kernel half.
    let halves = |part: sym::Part| {
        if user_mode {
            (sym::Part::Absent, part)
        } else {
            (part, sym::Part::Absent)
        }
    };
    let names_of = |pid: u32| cgroup_of.get(&pid).and_then(|(_, found)| found.as_ref());
    let time = now_hms();
    if !args.common.json && !args.stacks.folded {
        writeln!(
            out,
            "[{time}] Top {} stacks with outstanding allocations:",
            args.top
        )?;
    }
    // BCC's order: ascending, the biggest last.
    for ((pid, id), g) in ranked[..shown].iter().rev() {
        let part = part_of(*pid, *id);
        if args.common.json {
            let mut o = json!({
                "time": time,
                "bytes": g.bytes,
                "allocations": g.count,
                "stack": sym::part_json(&part, true),
            });
            if user_mode {
                o["pid"] = (*pid).into();
            }
            if let (Some((id, n)), Some(o)) = (names_of(*pid), o.as_object_mut()) {
                cgroups::add_json(o, *id, Some(n));
            }
            if args.show_allocs {
                o["allocs"] = g
                    .allocs
                    .iter()
                    .map(|(a, s)| json!({"addr": format!("{a:#x}"), "size": s}))
                    .collect();
            }
            out.json(&o)?;
            continue;
        }
        if args.stacks.folded {
            let comm = if user_mode {
                comm_of(comms, *pid)
            } else {
                "[kernel]".to_string()
            };
            let (kernel, user) = halves(part);
            let container = container_of(*pid);
            let stack = sym::Stack::plain(&kernel, &user, &comm, *pid, container.as_deref());
            writeln!(out, "{}", sym::folded_line(&stack, g.bytes))?;
            continue;
        }
        if args.show_allocs {
            for (addr, size) in &g.allocs {
                writeln!(out, "\taddr = {addr:x} size = {size}")?;
            }
        }
        writeln!(
            out,
            "\t{} bytes in {} allocations from stack",
            g.bytes, g.count
        )?;
        match &part {
            sym::Part::Frames(f) => {
                for frame in f {
                    writeln!(out, "\t\t{}", frame.long_label())?;
                }
            }
            _ => writeln!(out, "\t\t[Missed Stack]")?,
        }
        if let Some(c) = container_of(*pid) {
            writeln!(out, "\t\t[{c}]")?;
        }
        if pids.len() > 1 {
            writeln!(out, "\t\t-    {} ({pid})", comm_of(comms, *pid))?;
        }
    }
    if files.wanted() {
        let mut names: HashMap<u32, String> = HashMap::new();
        for ((pid, id), g) in &ranked {
            let part = part_of(*pid, *id);
            let comm = names.entry(*pid).or_insert_with(|| comm_of(comms, *pid));
            let (kernel, user) = halves(part);
            let container = container_of(*pid);
            let stack = sym::Stack::plain(&kernel, &user, comm, *pid, container.as_deref());
            files.add(
                &stack,
                g.bytes,
                *pid,
                &[g.bytes as i64, g.count as i64],
                &[
                    pprof::Label::Str("comm", comm),
                    pprof::Label::Num("pid", (*pid).into()),
                ]
                .into_iter()
                .chain(
                    container
                        .as_deref()
                        .map(|c| pprof::Label::Str("container", c)),
                )
                .chain(
                    names_of(*pid)
                        .and_then(|(_, n)| n.unit.as_deref())
                        .map(|u| pprof::Label::Str("unit", u)),
                )
                .collect::<Vec<_>>(),
            );
        }
    }
    files.finish(when == When::End)?;
    if args.common.verbose {
        note!(
            "report: {shown} stacks in {} ms, peak RSS {} KiB",
            started.elapsed().as_millis(),
            process::peak_rss_kib()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stack map's failures and memleak's own are each named: the
    /// stack map's were "of an unnamed kind" while the second match was
    /// evaluated first.
    #[test]
    fn every_error_counter_is_named() {
        use types::memleak_error as E;
        assert!(error_note(0).is_some_and(|n| n.contains("hash collisions")));
        for i in 0..E::ERR_MAX.0 {
            assert!(error_note(i).is_some(), "error {i} has no note");
        }
        assert_eq!(error_note(E::ERR_MAX.0), None);
    }
}
