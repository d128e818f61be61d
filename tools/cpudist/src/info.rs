// What cpudist is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "cpudist",
    aliases: &[],
    summary:
        "on-CPU (or -O off-CPU) time per scheduling as histograms, per process, thread or container",
    kind: Kind::Histogram,
    family: Family::Cpu,
    banner: "Tracing on-CPU time... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "cpudist_on_cpu_time",
        "cpudist_raw_tp_variant",
        "cpudist_dry_run",
        "cpudist_cgroup_filter",
    ],
    bench: Some(Bench {
        workload: Workload::SchedPipe { messages: 100_000 },
        ours: &[Ours::DEFAULT],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing on-CPU time")),
            Peer::bpftrace(Ready::Line("Tracing")),
            Peer::bcc(Ready::Line("Tracing on-CPU time")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["perf-sched(1)"],
};
