// What shmsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "shmsnoop",
    aliases: &[],
    summary: "every shmget(), shmat(), shmdt(), shmctl(): caller, arguments (flags named), result",
    kind: Kind::Event,
    family: Family::Memory,
    banner: "Tracing shm*() calls... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["shmsnoop_"],
    bench: Some(Bench {
        workload: Workload::ShmLoop { rounds: 20_000 },
        ours: &[Ours {
            ready: Ready::FirstEvent,
            ..Ours::DEFAULT
        }],
        peers: &[Peer::bcc(Ready::Line("ARGs"))],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["shmget(2)", "shmat(2)", "shmctl(2)", "ipcs(1)"],
};
