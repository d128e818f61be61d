// What tcptop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcptop",
    aliases: &[],
    summary: "top for TCP: KiB received and sent per process and connection, each interval",
    kind: Kind::IntervalTable,
    family: Family::Network,
    banner: "Tracing... Output every 1 secs. Hit Ctrl-C to end",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["tcptop_counts_a_transfer", "tcptop_function_modes"],
    bench: Some(Bench {
        workload: Workload::LossyTransfer,
        ours: &[Ours {
            ready: Ready::Banner,
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::HoldsPrograms),
            Peer::bcc(Ready::Line("Tracing")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["ss(8)", "iftop(8)"],
};
