// What cpufreq is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "cpufreq",
    aliases: &[],
    summary: "the CPUs' frequency while tasks run, sampled: linear histograms of the machine and of each process",
    kind: Kind::Histogram,
    family: Family::Cpu,
    banner: "Sampling CPU freq system-wide & by process. Ctrl-C to end.",
    // The programs load and verify everywhere; the frequency is known only
    // where a cpufreq driver runs (none here, nor in the guests).
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-P",
            label: "-P",
        },
    ],
    vm_tests: &["cpufreq_refuses_without_a_driver"],
    // Needs a cpufreq driver, which this machine lacks: its figures would
    // be of a refusal.
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["cpupower(1)", "turbostat(8)"],
};
