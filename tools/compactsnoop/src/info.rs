// What compactsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "compactsnoop",
    aliases: &[],
    summary: "every zone compaction: who ran it, the node, zone and order, sync or async, its latency and result",
    kind: Kind::Event,
    family: Family::Memory,
    banner: "Tracing compact zone events... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-e -K",
            label: "-e -K",
        },
    ],
    // Both forms of the suitability check's hook: what CI runs in its VMs.
    vm_tests: &["compactsnoop_hook_variants"],
    bench: Some(Bench {
        workload: Workload::CompactLoop { rounds: 20 },
        ours: &[Ours {
            ready: Ready::Line("COMM"),
            ..Ours::DEFAULT
        }],
        peers: &[Peer::bcc(Ready::Line("COMM"))],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["proc(5)"],
};
