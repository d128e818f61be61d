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
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["klockstat_"],
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["perf-lock(1)"],
};
