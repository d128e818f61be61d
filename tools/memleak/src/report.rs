//! The report: outstanding allocations grouped by stack, ranked, printed
//! as BCC's stacks, folded lines or JSON.

use std::collections::{HashMap, HashSet};
use std::io::Write;

use anyhow::Result;
use common::output::{now_hms, Out};
use common::sym::{self, Frame, Symbolizer};
use common::{maps, note, process};
use serde_json::json;

use crate::skel::{types, MemleakSkel};
use crate::{Args, SortBy};

/// A report's stacks: outstanding bytes and allocations per process and stack.
#[derive(Default)]
struct Group {
    bytes: u64,
    count: u64,
    allocs: Vec<(u64, u64)>,
}

fn collect(args: &Args, skel: &MemleakSkel) -> Result<HashMap<(u32, i32), Group>> {
    let mut groups: HashMap<(u32, i32), Group> = HashMap::new();
    if args.combined_only {
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
    for (k, info) in entries {
        if now.saturating_sub(info.ts_ns) <= older_ns {
            continue;
        }
        let g = groups.entry((info.tgid, info.stack_id)).or_default();
        g.bytes += info.size;
        g.count += 1;
        if args.show_allocs {
            g.allocs.push((k.addr, info.size));
        }
    }
    Ok(groups)
}

fn comm_of(pid: u32) -> String {
    process::comm(pid).unwrap_or_else(|| format!("pid-{pid}"))
}

/// Prints one report, and with -v how long it took.
pub fn print(
    args: &Args,
    skel: &MemleakSkel,
    pids: &[u32],
    out: &mut Out,
    symbolizer: &mut Symbolizer,
) -> Result<()> {
    let started = std::time::Instant::now();
    let stacks = print_stacks(args, skel, pids, out, symbolizer)?;
    if args.common.verbose {
        note!(
            "report: {stacks} stacks in {} ms, peak RSS {} KiB",
            started.elapsed().as_millis(),
            process::peak_rss_kib()
        );
    }
    Ok(())
}

/// What a non-zero counter of the kernel side's `errors` map means.
pub fn error_note(index: u32) -> Option<&'static str> {
    use types::memleak_error as E;
    Some(match E(index) {
        E::ERR_STACK_COLLISION => {
            "stacks not recorded: hash collisions in the stack map (raise --stack-storage-size)"
        }
        E::ERR_STACK_FULL => {
            "stacks not recorded: the stack map was full (raise --stack-storage-size)"
        }
        E::ERR_STACK_OTHER => "stacks not recorded for another error",
        E::ERR_ALLOCS_FULL => "allocations not tracked: the allocation map was full",
        E::ERR_COMBINED_FULL => "allocations not totalled for -C: the stack totals map was full",
        _ => return None,
    })
}

/// Prints the stacks; returns how many.
fn print_stacks(
    args: &Args,
    skel: &MemleakSkel,
    pids: &[u32],
    out: &mut Out,
    symbolizer: &mut Symbolizer,
) -> Result<usize> {
    let groups = collect(args, skel)?;
    let mut ranked: Vec<(&(u32, i32), &Group)> = groups.iter().collect();
    ranked.sort_by_key(|(k, g)| {
        let primary = match args.sort {
            SortBy::Size => g.bytes,
            SortBy::Count => g.count,
        };
        std::cmp::Reverse((primary, g.count, g.bytes, k.1))
    });
    ranked.truncate(args.top as usize);
    // BCC's order: ascending, the biggest last.
    ranked.reverse();

    let mut stacks: HashMap<i32, Vec<u64>> = HashMap::new();
    for ((_, id), _) in &ranked {
        if let Some(addrs) = maps::read_stack(&skel.maps.stack_traces, *id)? {
            stacks.insert(*id, addrs);
        }
    }
    let user_mode = !pids.is_empty();
    let mut seen_pids: HashSet<u32> = HashSet::new();
    for ((pid, id), _) in &ranked {
        if let Some(s) = stacks.get(id) {
            if user_mode {
                seen_pids.insert(*pid);
                symbolizer.prefetch_user(*pid, sym::lookup_addresses(s));
            } else {
                symbolizer.prefetch_kernel(sym::lookup_addresses(s));
            }
        }
    }
    let time = now_hms();
    if !args.common.json && !args.folded {
        writeln!(
            out,
            "[{time}] Top {} stacks with outstanding allocations:",
            args.top
        )?;
    }
    for ((pid, id), g) in &ranked {
        let frames: Option<Vec<std::rc::Rc<Frame>>> = stacks.get(id).map(|s| {
            if user_mode {
                symbolizer.user(*pid, s)
            } else {
                sym::trim_tracing_frames(&symbolizer.kernel(s)).to_vec()
            }
        });
        if args.common.json {
            let part = match &frames {
                Some(f) => sym::Part::Frames(f.clone()),
                None => sym::Part::Missed,
            };
            let mut o = json!({
                "time": time,
                "bytes": g.bytes,
                "allocations": g.count,
                "stack": sym::part_json(&part, true),
            });
            if user_mode {
                o["pid"] = (*pid).into();
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
        if args.folded {
            let part = match &frames {
                Some(f) => sym::Part::Frames(f.clone()),
                None => sym::Part::Missed,
            };
            let (kernel, user, comm) = if user_mode {
                (sym::Part::Absent, part, comm_of(*pid))
            } else {
                (part, sym::Part::Absent, "[kernel]".to_string())
            };
            let stack = sym::Stack {
                kernel: &kernel,
                user: &user,
                comm: &comm,
                pid: *pid,
                delimited: false,
                offsets: false,
            };
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
        match &frames {
            Some(f) => {
                for frame in f {
                    writeln!(out, "\t\t{}", frame.long_label())?;
                }
            }
            None => writeln!(out, "\t\t[Missed Stack]")?,
        }
        if pids.len() > 1 {
            writeln!(out, "\t\t-    {} ({pid})", comm_of(*pid))?;
        }
    }
    Ok(ranked.len())
}
