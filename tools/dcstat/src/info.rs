// What dcstat is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "dcstat",
    aliases: &[],
    summary: "dentry cache lookups, slow lookups and misses per second, with the hit ratio",
    kind: Kind::IntervalTable,
    family: Family::Files,
    banner: "Tracing dentry cache lookups... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs (this machine has neither
    // fentry nor kprobes: there the tool refuses, and its tests say so).
    vm_tests: &["dcstat_"],
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["path_resolution(7)"],
};
