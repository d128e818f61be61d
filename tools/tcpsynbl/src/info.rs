// What tcpsynbl is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcpsynbl",
    aliases: &[],
    summary: "TCP listen backlog histograms at each new connection, per backlog limit and port",
    kind: Kind::Histogram,
    family: Family::Network,
    banner: "Tracing SYN backlog size. Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    // The socket's cgroup: sock_cgroup_data changed layout in 5.15.
    vm_tests: &[
        "tcpsynbl_full_backlog_reaches_its_limit",
        "tcpsynbl_hook_variants",
        "tcpsynbl_per_container_keys_by_the_listeners_cgroup",
    ],
    bench: Some(Bench {
        workload: Workload::ConnectLoop { connections: 5000 },
        ours: &[Ours {
            ready: Ready::Banner,
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing SYN backlog size")),
            Peer::bcc(Ready::Line("Tracing SYN backlog size")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["ss(8)", "nstat(8)", "listen(2)"],
};
