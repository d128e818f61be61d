// What offcputime is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "offcputime",
    aliases: &[],
    summary: "time threads spend blocked, by kernel and user stack: multi-line, folded, JSON, or an SVG flame graph",
    kind: Kind::Stack,
    family: Family::Cpu,
    banner: "Tracing off-CPU time (us) of all threads by user + kernel stack... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "folded_output_attributes",
        "raw_tp_fallback",
        "dwarf_unwinding_finds",
        // The switched-out task's cgroup (CO-RE reads of each kernel's).
        "containers_root_each_blocked_stack",
    ],
    bench: Some(Bench {
        workload: Workload::SchedPipe { messages: 100_000 },
        ours: &[Ours {
            ready: Ready::Line("Tracing off-CPU time"),
            ..Ours::DEFAULT
        }],
        peers: &[
            // Prints nothing until it ends.
            Peer::libbpf_tools(Ready::HoldsPrograms),
            Peer::bpftrace(Ready::Line("Tracing off-CPU time")),
            Peer::bcc(Ready::Line("Tracing off-CPU time")),
        ],
        extras: &[Extra::UnwindCost, Extra::MappingRecords],
    }),
    man: include_str!("../man.roff"),
    see_also: &["flamegraph.pl(1)", "inferno-flamegraph(1)"],
};
