// What biopattern is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "biopattern",
    aliases: &[],
    summary:
        "random against sequential block I/O per disk: %RND, %SEQ, count and Kbytes each interval",
    kind: Kind::IntervalTable,
    family: Family::Disk,
    banner: "Tracing block device I/O pattern... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["biopattern_"],
    bench: Some(Bench {
        workload: Workload::FioRandread,
        ours: &[Ours {
            ready: Ready::HoldsPrograms,
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::HoldsPrograms),
            Peer::bcc(Ready::HoldsPrograms),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["iostat(1)"],
};
