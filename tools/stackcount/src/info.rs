// What stackcount is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "stackcount",
    aliases: &[],
    summary:
        "stacks counted at user functions, USDT probes, tracepoints or kernel functions (wildcards)",
    kind: Kind::Stack,
    family: Family::Process,
    banner: "Tracing functions... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun {
            args: "c:malloc",
            label: "c:malloc",
        },
        DryRun {
            args: "t:sched:sched_switch",
            label: "t:…",
        },
        DryRun {
            args: "vfs_read",
            label: "vfs_read",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["stackcount_"],
    // The cost per counted stack: malloc, -p on a loop of malloc+free
    // pairs (user and kernel stacks taken at each).
    bench: Some(Bench {
        workload: Workload::MallocLoop,
        ours: &[Ours {
            label: "ours",
            args: &["-p", "{pid}", "c:malloc"],
            how: "release build, -p on the loop",
            ready: Ready::Line("Tracing 1 functions"),
        }],
        peers: &[
            Peer::bcc_on_malloc(),
            Peer::bpftrace_on_pid(
                "bpftrace",
                "@[kstack, ustack] = count(), -p on the loop",
                "uprobe:{libc}:malloc { @[kstack, ustack] = count(); }",
                false,
            ),
            Peer::empty_uprobe_on_malloc(),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["uprobes(7)", "perf-probe(1)", "flamegraph.pl(1)"],
};
