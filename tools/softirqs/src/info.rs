// What softirqs is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "softirqs",
    aliases: &[],
    summary: "time (or -C counts) in softirqs by kind per interval, or -d as histograms",
    kind: Kind::Histogram,
    family: Family::Cpu,
    banner: "Tracing soft irq event time... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-C",
            label: "-C",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["softirqs_"],
    bench: Some(Bench {
        workload: Workload::LossyTransfer,
        ours: &[Ours::DEFAULT],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing soft irq event time")),
            Peer::bpftrace(Ready::Line("Tracing soft irq event time")),
            Peer::bcc(Ready::Line("Tracing soft irq event time")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["proc(5)"],
};
