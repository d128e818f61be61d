// What biolatency is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "biolatency",
    aliases: &[],
    summary: "block I/O latency histograms, per disk or per I/O flags, with percentiles",
    kind: Kind::Histogram,
    family: Family::Disk,
    banner: "Tracing block device I/O... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "biolatency_counts_direct_writes",
        "biolatency_queued_time",
        "biolatency_dry_run_and_raw_tp_fallback",
        "biolatency_fallbacks_count_io",
        // The submitter at the request's start: block_io_start or insert.
        "biolatency_per_container",
        "biolatency_container_filter",
    ],
    bench: Some(Bench {
        workload: Workload::FioRandread,
        ours: &[Ours::DEFAULT],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing block device I/O")),
            Peer::bpftrace(Ready::Line("Tracing block device I/O")),
            Peer::bcc(Ready::Line("Tracing block device I/O")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["fio(1)", "iostat(1)"],
};
