// What vfsstat is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "vfsstat",
    aliases: &[],
    summary: "VFS reads, writes, fsyncs, opens and creates per second, each interval",
    kind: Kind::IntervalTable,
    family: Family::Files,
    banner: "Tracing VFS calls... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "vfsstat_counts_known_calls",
        "vfsstat_system_call_mode",
        "vfsstat_dry_run",
    ],
    bench: Some(Bench {
        workload: Workload::OpenLoop { opens: 200_000 },
        ours: &[Ours {
            ready: Ready::Line("READ/s"),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("READ/s")),
            Peer::bpftrace(Ready::Line("Tracing")),
            Peer::bcc(Ready::Line("READ/s")),
            Peer::FLOOR_EXIT,
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["read(2)", "write(2)", "fsync(2)", "open(2)"],
};
