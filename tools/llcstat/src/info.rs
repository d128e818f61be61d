// What llcstat is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "llcstat",
    aliases: &[],
    summary: "last-level cache references, misses and hit rate by process and CPU, from the hardware counters",
    kind: Kind::IntervalTable,
    family: Family::Cpu,
    banner: "Running for 10 seconds or Hit Ctrl-C to end.",
    // The programs load and verify everywhere; the counters open only on
    // a machine with a PMU (none here, nor in the guests).
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-t",
            label: "-t",
        },
    ],
    vm_tests: &["llcstat_refuses_without_a_pmu"],
    // Needs a PMU, which this machine lacks: its figures would be of a
    // refusal.
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["perf-stat(1)"],
};
