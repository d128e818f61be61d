// What futexctn is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "futexctn",
    aliases: &[],
    summary: "user-space lock (futex) wait time as histograms, by process, lock and the stack that waited",
    kind: Kind::Histogram,
    family: Family::Cpu,
    banner: "Tracing futex waits... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "--all",
            label: "--all",
        },
    ],
    // The calls' own tracepoints and tp_btf's: what CI runs in its VMs.
    vm_tests: &["futexctn_hook_variants"],
    bench: Some(Bench {
        workload: Workload::MutexLoop {
            threads: 4,
            locks: 200_000,
        },
        ours: &[Ours::DEFAULT],
        // libbpf-tools' futexctn is newer than Debian's 0.26; BCC has none.
        peers: &[Peer {
            runs: PeerRun::BpftraceProgram {
                label: "bpftrace",
                how: "bpftrace -e, FUTEX_WAIT times by process, lock and user stack",
                args: &[],
                program: "tracepoint:syscalls:sys_enter_futex /(args->op & 127) == 0/ \
                          { @s[tid] = nsecs; @a[tid] = args->uaddr; } \
                          tracepoint:syscalls:sys_exit_futex /@s[tid]/ \
                          { @w[pid, @a[tid], ustack] = hist((nsecs - @s[tid]) / 1000); \
                          delete(@s[tid]); delete(@a[tid]); }",
            },
            ready: Ready::Line("Attaching"),
            reference: false,
        }],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["futex(2)", "pthread_mutex_lock(3)"],
};
