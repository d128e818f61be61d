// What bindsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "bindsnoop",
    aliases: &[],
    summary: "every bind() of an IPv4 or IPv6 socket: process, protocol, address, port, options, interface, result",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing binds ... Hit Ctrl-C to end",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["bindsnoop_"],
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
    see_also: &["bind(2)", "socket(7)", "ss(8)"],
};
