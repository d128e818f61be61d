// What wqlat is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "wqlat",
    aliases: &[],
    summary: "kernel workqueue latency (work queued until a worker starts it) as histograms, per workqueue or work function",
    kind: Kind::Histogram,
    family: Family::Cpu,
    banner: "Tracing work queue request latency time... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-W",
            label: "-W",
        },
    ],
    // Both hook forms: what CI runs in its VMs.
    vm_tests: &["wqlat_hook_variants"],
    bench: Some(Bench {
        workload: Workload::SyncfsLoop { syncs: 2_000 },
        ours: &[Ours::DEFAULT],
        peers: &[Peer::bcc(Ready::Line("Tracing"))],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &[],
};
