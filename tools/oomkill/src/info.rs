// What oomkill is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "oomkill",
    aliases: &[],
    summary: "every OOM kill: the task that ran the OOM killer, its victim, the memory, the load",
    kind: Kind::Event,
    family: Family::Memory,
    banner: "Tracing OOM kills... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["oomkill_"],
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["proc(5)", "cgroups(7)"],
};
