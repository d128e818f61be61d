// What biosnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "biosnoop",
    aliases: &[],
    summary:
        "every block I/O: submitting process, disk, op, sector, bytes, queue and device latency",
    kind: Kind::Event,
    family: Family::Disk,
    banner: "Tracing block I/O... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "biosnoop_shows_each_direct_read",
        "biosnoop_writes_and_queue_time",
        "biosnoop_raw_tp_fallback",
        "biosnoop_dry_run",
    ],
    bench: Some(Bench {
        workload: Workload::FioRandread,
        ours: &[Ours {
            ready: Ready::Line("TIME("),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("TIME(")),
            Peer::bpftrace(Ready::Line("TIME(")),
            Peer::bcc(Ready::Line("TIME(")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["iostat(1)", "blktrace(8)"],
};
