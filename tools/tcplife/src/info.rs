// What tcplife is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcplife",
    aliases: &[],
    summary: "every TCP session as it closes: owner, endpoints, KiB sent and received, duration",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing TCP sessions... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    // A cgroup's ancestors: ids before 6.0, pointers since.
    vm_tests: &[
        "tcplife_counts_a_sessions_bytes",
        "tcplife_dry_runs",
        "tcplife_container_filter_keeps_the_sessions_of_its_sockets",
    ],
    bench: Some(Bench {
        workload: Workload::ConnectLoop { connections: 5000 },
        ours: &[Ours {
            ready: Ready::Line("RADDR"),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("RADDR")),
            Peer::bpftrace(Ready::Line("RADDR")),
            Peer::bcc(Ready::Line("RADDR")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["ss(8)", "netstat(8)"],
};
