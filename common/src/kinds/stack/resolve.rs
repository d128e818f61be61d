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
    /// The waker tools': the task that woke this one.
    pub waker: Option<Waker>,
    /// At a user function's entry: its caller's return address, which the
    /// user stack lacks (0: none).
    pub entry_caller: u64,
    /// A tool's own part of the key: biostacks' disk (its device number);
    /// else 0.
    pub dev: u32,
}

/// The task that woke a key's task (offwaketime, wakeuptime), with its
/// stacks; `comm` empty where no wakeup was seen.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Waker {
    pub tgid: u32,
    /// The thread shown: the thread, or the process where counted by
    /// process.
    pub shown_id: u32,
    pub kern_stack_id: i32,
    pub user: User,
    pub comm: [i8; 16],
}

impl Waker {
    /// The kernel side's struct stack_waker, its user stack where `user`
    /// says.
    pub fn of(w: &crate::skel::types::stack_waker, user: User) -> Waker {
        Waker {
            tgid: w.tgid,
            shown_id: if w.tid != 0 { w.tid } else { w.tgid },
            kern_stack_id: w.kern_stack_id,
            user,
            comm: w.comm,
        }
    }
}

/// One task's side of a key: whose stacks, and where they are.
#[derive(Clone, Copy)]
struct Side {
    tgid: u32,
    kern_stack_id: i32,
    user: User,
    entry_caller: u64,
}

impl Key {
    /// The key's sides: its task's, then its waker's.
    fn sides(&self) -> impl Iterator<Item = Side> + '_ {
        let own = Side {
            tgid: self.tgid,
            kern_stack_id: self.kern_stack_id,
            user: self.user,
            entry_caller: self.entry_caller,
        };
        let waker = self.waker.as_ref().map(|w| Side {
            tgid: w.tgid,
            kern_stack_id: w.kern_stack_id,
            user: w.user,
            entry_caller: 0,
        });
        std::iter::once(own).chain(waker)
    }
}

/// A key's symbolized stacks: its task's halves, and its waker's.
#[derive(Debug, Clone)]
pub struct Parts {
    pub kernel: sym::Part,
    pub user: sym::Part,
    /// The waker's kernel and user halves.
    pub waker: Option<(sym::Part, sym::Part)>,
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
            waker: None,
            entry_caller: k.entry_caller,
            dev: k.dev,
        }
    }
}

/// Which halves of each stack the output wants (-U, -K).
#[derive(Debug, Clone, Copy)]
pub struct Halves {
    pub kernel: bool,
    pub user: bool,
}

/// The symbolized halves of each key's stacks (and its waker's), in the
/// keys' order: every stack read from the map once, the kernel's addresses
/// symbolized in one batch and each process's in one.
pub fn resolve<'k>(
    keys: impl Iterator<Item = &'k Key> + Clone,
    stack_map: &dyn libbpf_rs::MapCore,
    table: Option<&crate::unwind::StackTable>,
    symbolizer: &mut sym::Symbolizer,
    want: Halves,
) -> Result<Vec<Parts>> {
    use std::collections::{HashMap, HashSet};
    let sides = || keys.clone().flat_map(Key::sides);
    let mut stacks: HashMap<i32, Vec<u64>> = HashMap::new();
    for side in sides() {
        let user = match side.user {
            User::Map(id) if want.user => id,
            _ => -1,
        };
        let kernel = if want.kernel { side.kern_stack_id } else { -1 };
        for id in [kernel, user] {
            if id >= 0 && !stacks.contains_key(&id) {
                if let Some(addrs) = maps::read_stack(stack_map, id)? {
                    stacks.insert(id, addrs);
                }
            }
        }
    }
    if want.kernel {
        let kernel_ids: HashSet<i32> = sides().map(|s| s.kern_stack_id).collect();
        symbolizer.prefetch_kernel(
            kernel_ids
                .iter()
                .filter_map(|id| stacks.get(id))
                .flat_map(|s| sym::lookup_addresses(s)),
        );
    }
    // Stacks taken at a function's entry, with the caller put in.
    let mut with_caller: HashMap<(i32, u64), Vec<u64>> = HashMap::new();
    for side in sides() {
        if let (User::Map(id), true) = (side.user, side.entry_caller != 0) {
            if let Some(addrs) = stacks.get(&id) {
                with_caller
                    .entry((id, side.entry_caller))
                    .or_insert_with(|| sym::insert_caller(addrs, side.entry_caller));
            }
        }
    }
    let user_stack = |side: &Side, id: i32| match side.entry_caller {
        0 => stacks.get(&id),
        caller => with_caller.get(&(id, caller)),
    };
    if want.user {
        let mut by_process: HashMap<u32, HashSet<(User, u64)>> = HashMap::new();
        for side in sides() {
            by_process
                .entry(side.tgid)
                .or_default()
                .insert((side.user, side.entry_caller));
        }
        for (tgid, users) in &by_process {
            let addrs = users.iter().filter_map(|(u, caller)| match u {
                User::Map(id) => user_stack(
                    &Side {
                        tgid: *tgid,
                        kern_stack_id: -1,
                        user: *u,
                        entry_caller: *caller,
                    },
                    *id,
                )
                .map(Vec::as_slice),
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
        |id: i32,
         addrs: Option<&Vec<u64>>,
         frames: &mut dyn FnMut(&[u64]) -> Vec<std::rc::Rc<sym::Frame>>| match addrs {
            Some(addrs) => sym::Part::Frames(frames(addrs)),
            None if id == -1 => sym::Part::Absent,
            None => sym::Part::Missed,
        };
    let mut halves = |side: Side| {
        let kernel = if want.kernel {
            part(
                side.kern_stack_id,
                stacks.get(&side.kern_stack_id),
                &mut |a| sym::trim_tracing_frames(&symbolizer.kernel(a)).to_vec(),
            )
        } else {
            sym::Part::Absent
        };
        let user = match (side.user, table) {
            _ if !want.user => sym::Part::Absent,
            (User::Map(id), _) => part(id, user_stack(&side, id), &mut |a| {
                symbolizer.user(side.tgid, a)
            }),
            (User::Unwound(i), Some(t)) => match t.get(i) {
                Some(stack) => sym::Part::Frames(symbolizer.unwound(side.tgid, stack)),
                None => sym::Part::Missed,
            },
            (User::Absent, _) => sym::Part::Absent,
            _ => sym::Part::Missed,
        };
        (kernel, user)
    };
    let mut out = Vec::new();
    for k in keys {
        let mut sides = k.sides();
        let Some(own) = sides.next() else {
            continue;
        };
        let (kernel, user) = halves(own);
        out.push(Parts {
            kernel,
            user,
            waker: sides.next().map(&mut halves),
        });
    }
    Ok(out)
}
