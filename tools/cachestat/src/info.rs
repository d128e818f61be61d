// What cachestat is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "cachestat",
    aliases: &[],
    summary: "page cache hits, misses, dirtied pages and hit ratio per interval, system-wide or per process",
    kind: Kind::IntervalTable,
    family: Family::Files,
    banner: "Tracing page cache... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs. The raw_tp variant of the
    // filemap tracepoints (6.10+, where tp_btf always is) runs on the host.
    vm_tests: &[
        "cold_read_misses",
        "writes_show_dirties",
        "kprobe_mode",
    ],
    bench: Some(Bench {
        workload: Workload::CachedReads,
        ours: &[Ours {
            ready: Ready::Line("HITS"),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("HITS")),
            Peer::bpftrace(Ready::Line("Tracing page cache")),
            Peer::bcc(Ready::Line("HITS")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["free(1)", "vmstat(8)"],
};
