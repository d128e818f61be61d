// What biotop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "biotop",
    aliases: &[],
    summary: "top for disks: block I/O count, Kbytes and average latency per process each interval",
    kind: Kind::IntervalTable,
    family: Family::Disk,
    banner: "Tracing... Output every 1 secs. Hit Ctrl-C to end",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "biotop_tops_the_process",
        "biotop_raw_tp_fallback",
        "biotop_dry_run",
    ],
    bench: Some(Bench {
        workload: Workload::FioRandread,
        ours: &[Ours {
            ready: Ready::Line("Tracing"),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing")),
            Peer::bcc(Ready::Line("Tracing")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["iotop(8)", "top(1)"],
};
