//! The BPF programs on the machine: tracing programs the bench did not load
//! skew every figure (they run on the same hooks), so the bench refuses to
//! start beside them; and whatever the bench loaded must be gone at the end.

use std::collections::BTreeSet;
use std::fmt;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde_json::{json, Value};

use super::proc;

/// How long a program may outlive its process: the kernel frees it after an
/// RCU grace period, from a work queue.
const FREE_GRACE: Duration = Duration::from_secs(3);

#[derive(Debug, Clone)]
pub struct Prog {
    pub id: u32,
    /// The kernel's `enum bpf_prog_type`.
    pub ty: u32,
    pub name: String,
    /// Nanoseconds spent in the program and its runs, counted while
    /// kernel.bpf_stats_enabled is 1 (bpf_stats.rs).
    pub run_time_ns: u64,
    pub run_cnt: u64,
}

/// The kernel's names of program types (`enum bpf_prog_type`, in order).
const TYPE_NAMES: &[&str] = &[
    "unspec",
    "socket_filter",
    "kprobe",
    "sched_cls",
    "sched_act",
    "tracepoint",
    "xdp",
    "perf_event",
    "cgroup_skb",
    "cgroup_sock",
    "lwt_in",
    "lwt_out",
    "lwt_xmit",
    "sock_ops",
    "sk_skb",
    "cgroup_device",
    "sk_msg",
    "raw_tracepoint",
    "cgroup_sock_addr",
    "lwt_seg6local",
    "lirc_mode2",
    "sk_reuseport",
    "flow_dissector",
    "cgroup_sysctl",
    "raw_tracepoint_writable",
    "cgroup_sockopt",
    "tracing",
    "struct_ops",
    "ext",
    "lsm",
    "sk_lookup",
    "syscall",
    "netfilter",
];

/// Program types that run on tracing hooks (and so on the workloads'
/// paths); the rest (cgroup, socket, XDP...) is only listed.
const TRACING: &[&str] = &[
    "kprobe",
    "tracepoint",
    "perf_event",
    "raw_tracepoint",
    "raw_tracepoint_writable",
    "tracing",
    "ext",
    "lsm",
];

impl Prog {
    pub fn is_tracing(&self) -> bool {
        TRACING.contains(&self.type_name().as_str())
    }

    fn type_name(&self) -> String {
        TYPE_NAMES
            .get(self.ty as usize)
            .map_or_else(|| format!("type {}", self.ty), |n| n.to_string())
    }

    pub fn to_json(&self) -> Value {
        json!({ "id": self.id, "type": self.type_name(), "name": self.name })
    }
}

impl fmt::Display for Prog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "id {} {} {}", self.id, self.type_name(), self.name)
    }
}

/// The loaded programs, by the bpf(2) commands bpftool uses (no libbpf:
/// xtask must build before `cargo xtask deps` has installed libelf).
pub fn loaded() -> Vec<Prog> {
    const BPF_PROG_GET_NEXT_ID: libc::c_long = 11;
    const BPF_PROG_GET_FD_BY_ID: libc::c_long = 13;
    const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;
    let bpf = |cmd: libc::c_long, attr: &mut [u64; 8]| {
        // SAFETY: attr is a zeroed 64-byte union bpf_attr prefix, large
        // enough for these commands' fields, and outlives the call.
        unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), 64usize) }
    };
    let mut progs = Vec::new();
    let mut id = 0u32;
    loop {
        // start_id (u32), then next_id (u32).
        let mut attr = [0u64; 8];
        attr[0] = u64::from(id);
        if bpf(BPF_PROG_GET_NEXT_ID, &mut attr) != 0 {
            return progs;
        }
        id = (attr[0] >> 32) as u32;
        let mut attr = [0u64; 8];
        attr[0] = u64::from(id);
        let fd = bpf(BPF_PROG_GET_FD_BY_ID, &mut attr);
        if fd < 0 {
            continue; // unloaded meanwhile
        }
        // struct bpf_prog_info up to run_cnt: type at 0, id at 4, name at
        // 64, run_time_ns at 192, run_cnt at 200 (linux/bpf.h, 5.1 on).
        let mut info = [0u8; 208];
        let mut attr = [0u64; 8];
        // bpf_fd (u32), info_len (u32), info (u64).
        attr[0] = fd as u64 | ((info.len() as u64) << 32);
        attr[1] = info.as_mut_ptr() as u64;
        let ok = bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr) == 0;
        // SAFETY: fd is ours and closed once.
        unsafe { libc::close(fd as i32) };
        if !ok {
            continue;
        }
        let name = &info[64..80];
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(16)];
        let u64_at = |at: usize| u64::from_ne_bytes(info[at..at + 8].try_into().unwrap());
        progs.push(Prog {
            id,
            ty: u32::from_ne_bytes(info[0..4].try_into().unwrap_or_default()),
            name: String::from_utf8_lossy(name).into_owned(),
            run_time_ns: u64_at(192),
            run_cnt: u64_at(200),
        });
    }
}

/// The programs loaded when the bench started, and what it saw appear
/// since; checked around every measured condition.
pub struct Watch {
    start_ids: BTreeSet<u32>,
    allow_foreign: bool,
    /// Foreign tracing programs present at the start (only with --allow-foreign).
    pub foreign_at_start: Vec<Prog>,
    /// Foreign tracing programs that appeared during the run.
    pub appeared: Vec<String>,
    reported: BTreeSet<u32>,
}

impl Watch {
    /// Lists the loaded programs; fails if any traces, unless allowed.
    pub fn start(allow_foreign: bool) -> Result<Watch> {
        let progs = loaded();
        let (tracing, other): (Vec<Prog>, Vec<Prog>) =
            progs.iter().cloned().partition(Prog::is_tracing);
        for p in &other {
            println!("bench: info: loaded, not a tracing program (ignored): {p}");
        }
        if !tracing.is_empty() {
            for p in &tracing {
                eprintln!("bench: foreign tracing BPF program loaded: {p}");
            }
            if !allow_foreign {
                bail!(
                    "{} tracing BPF program(s) that the bench did not load are running; they \
                     would be measured with every tool. Stop them (bpftool prog show) or pass \
                     --allow-foreign",
                    tracing.len()
                );
            }
            eprintln!(
                "bench: WARNING: --allow-foreign: measuring beside {} foreign tracing \
                 program(s); every figure includes their cost (recorded in the results)",
                tracing.len()
            );
        }
        Ok(Watch {
            start_ids: progs.iter().map(|p| p.id).collect(),
            allow_foreign,
            foreign_at_start: tracing,
            appeared: Vec::new(),
            reported: BTreeSet::new(),
        })
    }

    /// Before a condition, when no tracer of ours runs: a tracing program
    /// not there at the start is someone else's.
    pub fn before_condition(&mut self) -> Result<BTreeSet<u32>> {
        let now = loaded();
        let new: Vec<&Prog> = now
            .iter()
            .filter(|p| p.is_tracing() && !self.start_ids.contains(&p.id))
            .filter(|p| !self.reported.contains(&p.id))
            .collect();
        if !new.is_empty() {
            let ids = new.iter().map(|p| p.id).collect();
            let holders = proc::holders(&ids);
            for p in &new {
                let by = holders
                    .get(&p.id)
                    .map(|h| {
                        h.iter()
                            .map(|(pid, cmd)| format!("pid {pid} ({cmd})"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_else(|| "no process".into());
                let line = format!("{p}, held by {by}");
                eprintln!("bench: foreign tracing BPF program appeared during the run: {line}");
                self.appeared.push(line);
                self.reported.insert(p.id);
            }
            if !self.allow_foreign {
                bail!(
                    "a tracing BPF program the bench did not load appeared during the run; \
                     the figures would include it (wait for a quiet machine or pass --allow-foreign)"
                );
            }
        }
        Ok(now.iter().map(|p| p.id).collect())
    }

    /// After a condition's processes are reaped: every program that
    /// appeared since `before` must go. One held by a process that is not
    /// ours is foreign (seen at the next condition); one held by our child
    /// or by no process was left by the bench.
    pub fn after_condition(&mut self, before: &BTreeSet<u32>, what: &str) -> Result<()> {
        let left = wait_gone(before);
        let leaked = leaked(&left);
        if !leaked.is_empty() {
            for line in &leaked {
                eprintln!("bench: LEFT LOADED after {what}: {line}");
            }
            bail!("{what} left {} BPF program(s) loaded", leaked.len());
        }
        Ok(())
    }

    /// At the end: no child process of ours and no program loaded since
    /// the start may remain. Kills and reaps stray children either way.
    pub fn finish(&mut self) -> Vec<String> {
        let mut problems = Vec::new();
        for (pid, cmd) in proc::children() {
            problems.push(format!("child process {pid} still running: {cmd}"));
            proc::kill_and_reap(pid);
        }
        let left = wait_gone(&self.start_ids);
        problems.extend(leaked(&left));
        problems
    }

    pub fn to_json(&self) -> Value {
        json!({
            "allowed": self.allow_foreign,
            "at_start": self.foreign_at_start.iter().map(Prog::to_json).collect::<Vec<_>>(),
            "appeared_during_run": self.appeared,
        })
    }
}

/// Waits until every program not in `keep` is unloaded, up to the grace
/// time; returns those still loaded.
fn wait_gone(keep: &BTreeSet<u32>) -> Vec<Prog> {
    let start = Instant::now();
    loop {
        let left: Vec<Prog> = loaded()
            .into_iter()
            .filter(|p| !keep.contains(&p.id))
            .collect();
        if left.is_empty() || start.elapsed() > FREE_GRACE {
            return left;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Of programs still loaded, those the bench left: held by no process (a
/// leaked attachment) or by a child of ours. Programs other processes hold
/// are not ours and are not listed.
fn leaked(left: &[Prog]) -> Vec<String> {
    if left.is_empty() {
        return Vec::new();
    }
    let ids = left.iter().map(|p| p.id).collect();
    let holders = proc::holders(&ids);
    let ours: BTreeSet<u32> = proc::children().iter().map(|(pid, _)| *pid).collect();
    left.iter()
        .filter_map(|p| match holders.get(&p.id) {
            None => Some(format!("{p}, held by no process")),
            Some(h) if h.iter().any(|(pid, _)| ours.contains(pid)) => {
                Some(format!("{p}, held by our child {:?}", h))
            }
            Some(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prog(ty: u32) -> Prog {
        Prog {
            id: 1,
            ty,
            name: "x".into(),
            run_time_ns: 0,
            run_cnt: 0,
        }
    }

    #[test]
    fn type_names_are_the_kernels() {
        assert_eq!(prog(24).type_name(), "raw_tracepoint_writable");
        assert_eq!(prog(8).type_name(), "cgroup_skb");
        assert_eq!(prog(2).type_name(), "kprobe");
        assert_eq!(prog(999).type_name(), "type 999");
    }

    #[test]
    fn only_tracing_types_count_as_foreign() {
        assert!(prog(26).is_tracing());
        assert!(prog(7).is_tracing());
        assert!(!prog(15).is_tracing());
        assert!(!prog(8).is_tracing());
    }
}
