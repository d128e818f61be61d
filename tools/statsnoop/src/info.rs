// What statsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "statsnoop",
    aliases: &[],
    summary: "every stat(), lstat(), newfstatat(), statx() and statfs(): path, result, error",
    kind: Kind::Event,
    family: Family::Process,
    banner: "Tracing stat calls... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["statsnoop_"],
    bench: Some(Bench {
        workload: Workload::StatLoop { stats: 200_000 },
        ours: &[Ours {
            ready: Ready::FirstEvent,
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::FirstEvent),
            Peer::bpftrace(Ready::FirstEvent),
            Peer::bcc(Ready::FirstEvent),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["stat(2)", "statx(2)", "statfs(2)"],
};
