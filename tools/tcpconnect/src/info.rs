// What tcpconnect is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcpconnect",
    aliases: &[],
    summary:
        "every TCP connect(): process, uid, source, destination and port; or counts per destination",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing connect ... Hit Ctrl-C to end",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-L",
            label: "-L",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "tcpconnect_shows_each_connect",
        "tcpconnect_state_mode",
        "tcpconnect_kprobe_mode",
        "tcpconnect_dry_runs",
    ],
    bench: Some(Bench {
        workload: Workload::ConnectLoop { connections: 5000 },
        ours: &[Ours {
            ready: Ready::Line("DPORT"),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("DPORT")),
            Peer::bcc(Ready::Line("DPORT")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["ss(8)", "netstat(8)"],
};
