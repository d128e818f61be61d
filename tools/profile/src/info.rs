// What profile is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "profile",
    summary: "on-CPU stack sampling at a frequency: multi-line, folded, JSON, an SVG flame graph or a pprof profile",
    kind: Kind::Stack,
    banner: "Sampling at 49 Hertz of all threads by user + kernel stack... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["folded_chain", "dwarf_unwinding", "kernel_frames_under"],
    bench: None,
    man: include_str!("../man.roff"),
    see_also: &["perf-record(1)", "flamegraph.pl(1)", "inferno-flamegraph(1)"],
};
