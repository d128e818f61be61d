// What tcpdrop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcpdrop",
    aliases: &[],
    summary:
        "TCP segments the kernel drops: addresses, ports, flags, state, drop reason, kernel stack",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing TCP drops... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    // The socket's cgroup: each kernel's layout (a tagged word before 5.15).
    vm_tests: &["tcpdrop_counts_netfilter_drops", "tcpdrop_container_filter"],
    bench: Some(Bench {
        workload: Workload::LossyTransfer,
        ours: &[Ours {
            ready: Ready::Line("REASON"),
            ..Ours::DEFAULT
        }],
        peers: &[Peer::bcc(Ready::Line("REASON"))],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["nstat(8)", "dropwatch(1)"],
};
