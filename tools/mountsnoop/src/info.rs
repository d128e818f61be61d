// What mountsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "mountsnoop",
    aliases: &[],
    summary: "every mount(), umount(), fsopen(), fsmount(), move_mount(): caller, namespace, call",
    kind: Kind::Event,
    family: Family::Process,
    banner: "Tracing mount calls... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["mountsnoop_"],
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["mount(2)", "umount(2)", "mount_namespaces(7)"],
};
