// What klockstat is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "klockstat",
    aliases: &[],
    summary: "kernel lock waits and holds (mutexes, rw semaphores, spinlocks) by the stack that asked, or by thread",
    kind: Kind::Stack,
    family: Family::Cpu,
    banner: "Tracing mutex/sem lock events...  Hit Ctrl-C to end",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-P",
            label: "-P",
        },
    ],
    // Each hook variant: the contention tracepoints' three forms, the
    // kprobes' holds, the lock calls' waits (before 5.19): what CI runs in
    // its VMs.
    vm_tests: &[
        "klockstat_hook_variants",
        "klockstat_holds_where_kprobes_are",
        "klockstat_waits_from_the_lock_calls",
        "klockstat_finds_a_lock_variable_by_name",
    ],
    bench: Some(Bench {
        workload: Workload::PipeLockLoop {
            threads: 8,
            writes: 50_000,
        },
        ours: &[Ours::DEFAULT],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing")),
            Peer::bcc(Ready::Line("Tracing")),
            Peer {
                runs: PeerRun::BpftraceProgram {
                    label: "bpftrace",
                    how: "bpftrace -e, waits by kernel stack on the same tracepoints",
                    args: &[],
                    program: "tracepoint:lock:contention_begin { @s[tid] = nsecs; } \
                              tracepoint:lock:contention_end /@s[tid]/ \
                              { @w[kstack(8)] = stats(nsecs - @s[tid]); delete(@s[tid]); }",
                },
                ready: Ready::Line("Attaching"),
                reference: false,
            },
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["perf-lock(1)"],
};
