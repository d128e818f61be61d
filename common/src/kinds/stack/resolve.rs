//! From the kernel's stack ids to symbolized stacks: every stack read once,
//! each process's addresses symbolized in one batch, and the memory maps of
//! processes kept for the report.

use anyhow::Result;

use crate::kernel::maps;
use crate::sym;

/// Keeps the memory map of each process whose user stacks the kernel side
/// recorded (seenpids.bpf.h's `seen_pids`, emptied here), so that its
/// stacks still have names when it has exited by the report. Every stack
/// tool that symbolizes the stack map's user stacks at its report uses it.
#[derive(Default)]
pub struct ProcessKeeper {
    seen: Option<libbpf_rs::MapHandle>,
    kept: std::collections::HashSet<u32>,
    checked: Option<std::time::Instant>,
}

impl ProcessKeeper {
    /// Starts reading the kernel side's `seen_pids` map.
    pub fn watch(&mut self, seen_pids: libbpf_rs::MapHandle) {
        self.seen = Some(seen_pids);
    }

    /// At most once a second (call it whenever the loop wakes): keeps the
    /// maps of the processes seen for the first time.
    pub fn poll(&mut self, symbolizer: &mut sym::Symbolizer) {
        use libbpf_rs::MapCore;
        let Some(seen) = &self.seen else { return };
        if self
            .checked
            .is_some_and(|t| t.elapsed() < std::time::Duration::from_secs(1))
        {
            return;
        }
        self.checked = Some(std::time::Instant::now());
        let pids: Vec<u32> = seen
            .keys()
            .filter_map(|k| Some(u32::from_ne_bytes(k.get(..4)?.try_into().ok()?)))
            .collect();
        for pid in pids {
            let _ = seen.delete(&pid.to_ne_bytes());
            if self.kept.insert(pid) {
                symbolizer.keep_process(pid);
            }
        }
    }
}

/// Where a count's user stack is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum User {
    /// In the kernel's stack map: its id; -1 for none, another negative
    /// id for the stack map's failure.
    Map(i32),
    /// None wanted (a kernel thread, -K).
    Absent,
    /// Its copy was lost (--unwind dwarf).
    Missed,
    /// Unwound from a copy (--unwind dwarf): its index in the stack table.
    Unwound(u32),
}

/// What a stack tool counts by: a process (or thread) and its two stacks.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// The process, whose memory map symbolizes the user stack.
    pub tgid: u32,
    /// What `comm (…)` shows: the thread, or the process.
    pub shown_id: u32,
    /// In the stack map; -1 for none, another negative id for a failure.
    pub kern_stack_id: i32,
    pub user: User,
    pub comm: [i8; 16],
    /// The task's cgroup (--containers; else 0).
    pub cgroup_id: u64,
}

impl Key {
    /// The key of the kernel side's `counts` map (stackcounts.bpf.h):
    /// `tid` 0 where counted by process.
    pub fn of(k: &crate::skel::types::stack_key, user: User) -> Key {
        Key {
            tgid: k.tgid,
            shown_id: if k.tid != 0 { k.tid } else { k.tgid },
            kern_stack_id: k.kern_stack_id,
            user,
            comm: k.comm,
            cgroup_id: k.cgroup_id,
        }
    }
}

/// Which halves of each stack the output wants (-U, -K).
#[derive(Debug, Clone, Copy)]
pub struct Halves {
    pub kernel: bool,
    pub user: bool,
}

/// The symbolized halves of each key's stacks, in the keys' order: every
/// stack read from the map once, the kernel's addresses symbolized in one
/// batch and each process's in one.
pub fn resolve<'k>(
    keys: impl Iterator<Item = &'k Key> + Clone,
    stack_map: &dyn libbpf_rs::MapCore,
    table: Option<&crate::unwind::StackTable>,
    symbolizer: &mut sym::Symbolizer,
    want: Halves,
) -> Result<Vec<(sym::Part, sym::Part)>> {
    use std::collections::{HashMap, HashSet};
    let mut stacks: HashMap<i32, Vec<u64>> = HashMap::new();
    for k in keys.clone() {
        let user = match k.user {
            User::Map(id) if want.user => id,
            _ => -1,
        };
        let kernel = if want.kernel { k.kern_stack_id } else { -1 };
        for id in [kernel, user] {
            if id >= 0 && !stacks.contains_key(&id) {
                if let Some(addrs) = maps::read_stack(stack_map, id)? {
                    stacks.insert(id, addrs);
                }
            }
        }
    }
    if want.kernel {
        let kernel_ids: HashSet<i32> = keys.clone().map(|k| k.kern_stack_id).collect();
        symbolizer.prefetch_kernel(
            kernel_ids
                .iter()
                .filter_map(|id| stacks.get(id))
                .flat_map(|s| sym::lookup_addresses(s)),
        );
    }
    if want.user {
        let mut by_process: HashMap<u32, HashSet<User>> = HashMap::new();
        for k in keys.clone() {
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
    }
    let part =
        |id: i32, frames: &mut dyn FnMut(&[u64]) -> Vec<std::rc::Rc<sym::Frame>>| match stacks
            .get(&id)
        {
            Some(addrs) => sym::Part::Frames(frames(addrs)),
            None if id == -1 => sym::Part::Absent,
            None => sym::Part::Missed,
        };
    let mut out = Vec::new();
    for k in keys {
        let kernel = if want.kernel {
            part(k.kern_stack_id, &mut |a| {
                sym::trim_tracing_frames(&symbolizer.kernel(a)).to_vec()
            })
        } else {
            sym::Part::Absent
        };
        let user = match (k.user, table) {
            _ if !want.user => sym::Part::Absent,
            (User::Map(id), _) => part(id, &mut |a| symbolizer.user(k.tgid, a)),
            (User::Unwound(i), Some(t)) => match t.get(i) {
                Some(stack) => sym::Part::Frames(symbolizer.unwound(k.tgid, stack)),
                None => sym::Part::Missed,
            },
            (User::Absent, _) => sym::Part::Absent,
            _ => sym::Part::Missed,
        };
        out.push((kernel, user));
    }
    Ok(out)
}
