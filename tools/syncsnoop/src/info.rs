// What syncsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "syncsnoop",
    aliases: &[],
    summary: "every sync(), syncfs(), fsync(), fdatasync(), msync(), sync_file_range(): caller, latency, result, file",
    kind: Kind::Event,
    family: Family::Files,
    banner: "Tracing sync calls... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["syncsnoop_"],
    bench: Some(Bench {
        workload: Workload::FdatasyncLoop { syncs: 20_000 },
        ours: &[Ours {
            ready: Ready::FirstEvent,
            ..Ours::DEFAULT
        }],
        // bpftrace's lines show no file to wait for: ready at its banner.
        peers: &[
            Peer::bpftrace(Ready::Line("Tracing sync syscalls")),
            Peer::bcc(Ready::Banner),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["sync(2)", "fsync(2)", "msync(2)", "sync_file_range(2)"],
};
