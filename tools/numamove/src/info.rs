// What numamove is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "numamove",
    aliases: &[],
    summary: "NUMA misplaced-page migrations (or any migration reason) and their milliseconds, each interval",
    kind: Kind::IntervalTable,
    family: Family::Memory,
    banner: "Tracing page migrations... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-r all -P",
            label: "-r all -P",
        },
    ],
    // NUMA balancing in a guest with a second (memory-only) node, and
    // each hook form: what CI runs in its VMs.
    vm_tests: &[
        "numamove_counts_numa_balancing_migrations",
        "numamove_hook_variants",
    ],
    bench: Some(Bench {
        workload: Workload::CompactLoop { rounds: 20 },
        ours: &[Ours {
            ready: Ready::Line("NUMA_migrations"),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("TIME")),
            Peer::bcc(Ready::Line("TIME")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["numastat(8)", "migratepages(8)", "move_pages(2)"],
};
