// What tcptracer is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcptracer",
    aliases: &[],
    summary: "every TCP connect, accept and close: process, addresses, ports, network namespace",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing TCP established connections. Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["tcptracer_hook_variants"],
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
