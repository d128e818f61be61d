// What runqlat is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "runqlat",
    aliases: &[],
    summary: "scheduler run queue latency histograms, per process, thread or pid namespace",
    kind: Kind::Histogram,
    family: Family::Cpu,
    banner: "Tracing run queue latency... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "runqlat_counts_preempted",
        "runqlat_raw_tp_fallback",
        "runqlat_dry_run",
        // Another task's cgroup, read from its task_struct.
        "runqlat_per_container",
    ],
    bench: Some(Bench {
        workload: Workload::SchedPipe { messages: 100_000 },
        ours: &[Ours::DEFAULT],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing run queue latency")),
            // The BEGIN probe runs once every other probe is attached.
            Peer::bpftrace(Ready::Line("Tracing CPU scheduler")),
            Peer::bcc(Ready::Line("Tracing run queue latency")),
        ],
        extras: &[Extra::PrometheusScrape],
    }),
    man: include_str!("../man.roff"),
    see_also: &["perf-sched(1)"],
};
