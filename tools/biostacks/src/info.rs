// What biostacks is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "biostacks",
    aliases: &[],
    summary: "block I/O latency histograms by the kernel stack that submitted the I/O; folded, JSON, flame graph, pprof",
    kind: Kind::Stack,
    family: Family::Disk,
    banner: "Tracing block I/O with init stacks. Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "biostacks_histograms_direct_writes_by_their_stack",
        "biostacks_raw_tp_fallback",
        "biostacks_containers",
    ],
    bench: Some(Bench {
        workload: Workload::FioRandread,
        ours: &[Ours::DEFAULT],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing block I/O with init stacks")),
            Peer::bpftrace(Ready::Line("Tracing block I/O with init stacks")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["flamegraph.pl(1)"],
};
