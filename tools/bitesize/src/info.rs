// What bitesize is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "bitesize",
    aliases: &[],
    summary: "block I/O size histograms per process name, with percentiles",
    kind: Kind::Histogram,
    family: Family::Disk,
    banner: "Tracing block I/O... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "bitesize_sizes_fall_in_their_slots",
        "bitesize_raw_tp_fallback",
    ],
    bench: Some(Bench {
        workload: Workload::FioRandread,
        ours: &[Ours::DEFAULT],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing block device I/O")),
            Peer::bpftrace(Ready::Line("Tracing block device I/O")),
            Peer::bcc(Ready::Line("Tracing block I/O")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["fio(1)", "iostat(1)"],
};
