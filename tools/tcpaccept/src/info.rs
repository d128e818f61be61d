// What tcpaccept is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcpaccept",
    aliases: &[],
    summary: "every TCP accept(): the accepting process, remote and local address and port",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing TCP accepts... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "tcpaccept_names_the_accepting_process",
        "tcpaccept_system_call_mode",
        "tcpaccept_kretprobe_mode",
    ],
    bench: Some(Bench {
        workload: Workload::ConnectLoop { connections: 5000 },
        ours: &[Ours {
            ready: Ready::Line("LPORT"),
            ..Ours::DEFAULT
        }],
        peers: &[Peer::bcc(Ready::Line("LPORT"))],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["ss(8)", "netstat(8)"],
};
