// What tcppktlat is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "tcppktlat",
    aliases: &[],
    summary:
        "each read of a TCP socket: how long its oldest unread data waited, reader, connection",
    kind: Kind::Event,
    family: Family::Network,
    banner: "Tracing TCP received data's wait for its reader... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["tcppktlat_hook_variants"],
    bench: Some(Bench {
        workload: Workload::LossyTransfer,
        ours: &[Ours {
            ready: Ready::Line("RPORT"),
            ..Ours::DEFAULT
        }],
        peers: &[Peer::libbpf_tools(Ready::Line("RPORT"))],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["ss(8)"],
};
