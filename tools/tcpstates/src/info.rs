// What tcpstates is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcpstates",
    aliases: &[],
    summary:
        "every TCP state change: socket, task, addresses, ports, old and new state, time in the old",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing TCP state changes... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "tcpstates_session_in_order",
        "tcpstates_dry_runs",
        // The socket's cgroup: each kernel's layout (a tagged word before 5.15).
        "tcpstates_container_filter",
    ],
    bench: Some(Bench {
        workload: Workload::ConnectLoop { connections: 5000 },
        ours: &[Ours {
            ready: Ready::Line("SKADDR"),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("SKADDR")),
            Peer::bcc(Ready::Line("SKADDR")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["ss(8)", "netstat(8)", "journalctl(1)"],
};
