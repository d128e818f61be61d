// What tcprtt is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcprtt",
    aliases: &[],
    summary: "TCP smoothed round trip time histograms, all or per local or remote address, with percentiles",
    kind: Kind::Histogram,
    family: Family::Network,
    banner: "Tracing TCP RTT... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    // The socket's cgroup: sock_cgroup_data changed layout in 5.15.
    vm_tests: &[
        "tcprtt_counts_each_segment",
        "tcprtt_raw_tp",
        "tcprtt_per_container_keys_by_the_sockets_cgroup",
    ],
    bench: Some(Bench {
        workload: Workload::LossyTransfer,
        ours: &[Ours {
            ready: Ready::Banner,
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::HoldsPrograms),
            Peer::bcc(Ready::Line("Tracing TCP RTT")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["ss(8)", "ping(8)"],
};
