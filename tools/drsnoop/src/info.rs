// What drsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "drsnoop",
    aliases: &[],
    summary:
        "every direct and memory cgroup reclaim a task runs: its latency and the pages it freed",
    kind: Kind::Event,
    family: Family::Memory,
    banner: "Tracing direct reclaim events... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "--direct",
            label: "--direct",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["drsnoop_hook_variants"],
    bench: Some(Bench {
        workload: Workload::CgroupReclaim { passes: 5 },
        ours: &[Ours {
            ready: Ready::Line("COMM"),
            ..Ours::DEFAULT
        }],
        // Theirs see direct reclaim only: attached, they show nothing here.
        peers: &[
            Peer::libbpf_tools(Ready::Line("COMM")),
            Peer::bcc(Ready::Line("COMM")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["vmstat(8)", "cgroups(7)"],
};
