// What tcpretrans is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcpretrans",
    aliases: &[],
    summary: "every TCP retransmit: owner pid, addresses and ports, TCP state, sequence; or counts per flow",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing retransmits ... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-l",
            label: "-l",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "retransmits_show",
        "classic_tracepoint_fallback",
        "loss_probes",
        "dry_runs_verify",
    ],
    bench: Some(Bench {
        workload: Workload::LossyTransfer,
        ours: &[Ours {
            ready: Ready::Line("LADDR:LPORT"),
            ..Ours::DEFAULT
        }],
        peers: &[
            // Prints nothing until it ends.
            Peer::libbpf_tools(Ready::HoldsPrograms),
            Peer::bpftrace(Ready::Line("Tracing tcp retransmits")),
            Peer::bcc(Ready::Line("Tracing retransmits")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["ss(8)", "nstat(8)"],
};
