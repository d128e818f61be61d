// What funccount is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "funccount",
    aliases: &[],
    summary:
        "calls counted per user function, USDT probe, tracepoint or kernel function (wildcards)",
    kind: Kind::IntervalTable,
    family: Family::Process,
    banner: "Tracing functions... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun {
            args: "c:malloc",
            label: "c:malloc",
        },
        DryRun {
            args: "t:syscalls:sys_enter_getppid",
            label: "t:…",
        },
        DryRun {
            args: "vfs_read",
            label: "vfs_read",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["funccount_"],
    // The cost per call of a counted function (malloc, -p on a loop of
    // malloc+free pairs), and the attach time of 1,000 functions.
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
                "a count per probe, -p on the loop",
                "uprobe:{libc}:malloc { @[probe] = count(); }",
                false,
            ),
            Peer::empty_uprobe_on_malloc(),
        ],
        extras: &[Extra::AttachMany],
    }),
    man: include_str!("../man.roff"),
    see_also: &["uprobes(7)", "perf-probe(1)"],
};
