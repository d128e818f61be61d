// What filegone is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "filegone",
    aliases: &[],
    summary: "every file deleted (unlink, unlinkat, rmdir) or renamed: who, and the absolute paths",
    kind: Kind::Event,
    family: Family::Files,
    banner: "Tracing deleted and renamed files... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["filegone_"],
    bench: Some(Bench {
        workload: Workload::UnlinkLoop { files: 20_000 },
        ours: &[Ours {
            ready: Ready::FirstEvent,
            ..Ours::DEFAULT
        }],
        peers: &[Peer::bcc(Ready::Banner)],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["unlink(2)", "rename(2)", "rmdir(2)"],
};
