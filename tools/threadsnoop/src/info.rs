// What threadsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "threadsnoop",
    aliases: &[],
    summary: "every new thread: the process that made it, its id, the function it starts in",
    kind: Kind::Event,
    family: Family::Process,
    banner: "Tracing new threads... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["threadsnoop_"],
    bench: Some(Bench {
        workload: Workload::ThreadLoop { threads: 5_000 },
        ours: &[Ours {
            ready: Ready::FirstEvent,
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::bcc(Ready::Line("FUNC")),
            Peer::bpftrace(Ready::Line("TIME(ms)")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["pthread_create(3)", "clone(2)"],
};
