// What sofdsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "sofdsnoop",
    aliases: &[],
    summary:
        "file descriptors passed over unix sockets: sender or receiver, socket, descriptor, file",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing file descriptors passed over unix sockets... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["sofdsnoop_"],
    bench: Some(Bench {
        workload: Workload::FdPassLoop { rounds: 20_000 },
        ours: &[Ours {
            ready: Ready::FirstEvent,
            ..Ours::DEFAULT
        }],
        peers: &[Peer::bcc(Ready::Line("NAME"))],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["unix(7)", "cmsg(3)", "sendmsg(2)", "recvmsg(2)"],
};
