// What mdflush is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "mdflush",
    aliases: &[],
    summary: "every flush sent to an md (software RAID) array: time, process, array",
    kind: Kind::Event,
    family: Family::Disk,
    banner: "Tracing md flush requests... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs (md_mod and raid1 are
    // loaded there; this machine's kernel has no md).
    vm_tests: &["mdflush_"],
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["mdadm(8)", "fsync(2)"],
};
