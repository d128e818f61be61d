// What solisten is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "solisten",
    aliases: &[],
    summary: "every listen() of an IPv4 or IPv6 socket: process, protocol, address, port, backlog in force, result",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing listen() ... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["solisten_"],
    bench: Some(Bench {
        workload: Workload::BindLoop { rounds: 20_000 },
        ours: &[Ours {
            ready: Ready::FirstEvent,
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::FirstEvent),
            Peer::bcc(Ready::FirstEvent),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["listen(2)", "socket(7)", "ss(8)"],
};
