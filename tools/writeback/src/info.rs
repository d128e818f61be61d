// What writeback is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "writeback",
    aliases: &[],
    summary: "each round of the kernel's writeback of dirty pages: device, pages written, reason, duration",
    kind: Kind::Event,
    family: Family::Files,
    banner: "Tracing writeback... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["writeback_sync_shows", "writeback_raw_tp_variant"],
    bench: Some(Bench {
        workload: Workload::SyncfsLoop { syncs: 2000 },
        ours: &[Ours {
            ready: Ready::Line("TIME"),
            ..Ours::DEFAULT
        }],
        peers: &[Peer::bpftrace(Ready::Line("TIME"))],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["sync(1)", "biosnoop(8)"],
};
