// What tcpconnlat is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcpconnlat",
    aliases: &[],
    summary: "every completed TCP connect with its latency, SYN sent to handshake done: process, addresses",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing TCP connect latency... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["tcpconnlat_times_a_retransmitted_syn", "tcpconnlat_dry_runs"],
    bench: Some(Bench {
        workload: Workload::ConnectLoop { connections: 5000 },
        ours: &[Ours {
            ready: Ready::Line("LAT(ms)"),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("LAT(ms)")),
            Peer::bcc(Ready::Line("LAT(ms)")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["ss(8)"],
};
