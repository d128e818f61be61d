// What runqslower is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "runqslower",
    aliases: &[],
    summary:
        "each run queue wait longer than a threshold: the task, its wait, the task it displaced",
    kind: Kind::Event,
    family: Family::Cpu,
    banner: "Tracing run queue latency higher than 10000 us",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["runqslower_"],
    bench: Some(Bench {
        workload: Workload::SchedPipe { messages: 100_000 },
        // Its text starts with the header (the banner's note goes to stderr
        // with --json only).
        ours: &[Ours {
            ready: Ready::Line("LAT(us)"),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing run queue latency")),
            Peer::bpftrace(Ready::Line("Tracing run queue latency")),
            Peer::bcc(Ready::Line("Tracing run queue latency")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["perf-sched(1)"],
};
