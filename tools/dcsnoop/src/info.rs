// What dcsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "dcsnoop",
    aliases: &[],
    summary: "each failed dentry cache lookup (each lookup with -a): process and name",
    kind: Kind::Event,
    family: Family::Files,
    banner: "Tracing dentry cache lookups... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-a",
            label: "-a",
        },
    ],
    // Each hook variant: what CI runs in its VMs (this machine has neither
    // fentry nor kprobes: there the tool refuses, and its tests say so).
    vm_tests: &["dcsnoop_"],
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["path_resolution(7)"],
};
