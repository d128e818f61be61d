// What funccount is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "funccount",
    aliases: &[],
    summary:
        "calls counted per user function, USDT probe, tracepoint or kernel function (wildcards)",
    kind: Kind::Summary,
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
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["uprobes(7)", "perf-probe(1)"],
};
