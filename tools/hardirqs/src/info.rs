// What hardirqs is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "hardirqs",
    aliases: &[],
    summary: "time (or -C counts) in each hard IRQ handler per interval, or -d as histograms",
    kind: Kind::Histogram,
    family: Family::Cpu,
    banner: "Tracing hard irq event time... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-C",
            label: "-C",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["hardirqs_"],
    bench: Some(Bench {
        workload: Workload::LossyTransfer,
        ours: &[Ours::DEFAULT],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing hard irq event time")),
            Peer::bpftrace(Ready::Line("Tracing hard irq event time")),
            Peer::bcc(Ready::Line("Tracing hard irq event time")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["proc(5)"],
};
