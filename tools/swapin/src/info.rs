// What swapin is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "swapin",
    aliases: &[],
    summary: "swap-ins by process each interval",
    kind: Kind::IntervalTable,
    family: Family::Memory,
    banner: "Counting swap ins. Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Swap-ins of a program of the test's own, where kprobes are.
    vm_tests: &["swapin_counts_the_pages_read_back"],
    // Needs kprobes (and swap), which this machine lacks: its figures
    // would be of a refusal.
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["swapon(8)", "vmstat(8)"],
};
