// What tcpsubnet is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcpsubnet",
    aliases: &[],
    summary: "TCP bytes sent per destination subnet (IPv4 or IPv6, first match), each interval",
    kind: Kind::IntervalTable,
    family: Family::Network,
    banner: "Tracing... Output every 1 secs. Hit Ctrl-C to end",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["tcpsubnet_"],
    bench: Some(Bench {
        workload: Workload::LossyTransfer,
        ours: &[Ours {
            ready: Ready::Banner,
            ..Ours::DEFAULT
        }],
        peers: &[Peer::bcc(Ready::Line("Tracing..."))],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["ss(8)", "ip-route(8)"],
};
