// What readahead is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "readahead",
    aliases: &[],
    summary: "pages read ahead, how many went unused, and the used ones' age at first use",
    kind: Kind::Histogram,
    family: Family::Files,
    banner: "Tracing fs read-ahead... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs (this machine has neither
    // fentry nor kprobes: there the tool refuses, and its tests say so).
    vm_tests: &["readahead_"],
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["posix_fadvise(2)", "readahead(2)", "blockdev(8)"],
};
