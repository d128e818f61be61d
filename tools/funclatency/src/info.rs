// What funclatency is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "funclatency",
    aliases: &[],
    summary:
        "time per call of user or kernel functions (wildcards, -F per function) as log2 histograms",
    kind: Kind::Histogram,
    family: Family::Process,
    banner: "Tracing functions... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun {
            args: "c:malloc",
            label: "c:malloc",
        },
        DryRun {
            args: "vfs_read",
            label: "vfs_read",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["funclatency_"],
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["uprobes(7)", "perf-probe(1)"],
};
