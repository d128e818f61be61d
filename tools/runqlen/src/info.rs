// What runqlen is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "runqlen",
    aliases: &[],
    summary: "run queue length sampled on every CPU: linear histograms, per CPU, or occupancy",
    kind: Kind::Histogram,
    family: Family::Cpu,
    banner: "Sampling run queue length... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["runqlen_"],
    bench: Some(Bench {
        workload: Workload::SchedPipe { messages: 100_000 },
        ours: &[Ours::DEFAULT],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Sampling run queue length")),
            Peer::bpftrace(Ready::Line("Sampling run queue length")),
            Peer::bcc(Ready::Line("Sampling run queue length")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["mpstat(1)"],
};
