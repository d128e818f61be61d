// What cachetop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "cachetop",
    aliases: &[],
    summary:
        "page cache hits, misses, dirtied pages and read/write hit ratios per process, top-like",
    kind: Kind::IntervalTable,
    family: Family::Files,
    banner: "Tracing... Output every 5 secs. Hit Ctrl-C to end",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs. The raw_tp variant of the
    // filemap tracepoints (6.10+, where tp_btf always is) runs on the host.
    vm_tests: &["cachetop_cold_and_warm", "cachetop_kprobe_mode"],
    bench: Some(Bench {
        workload: Workload::CachedReads,
        ours: &[Ours {
            ready: Ready::Line("Tracing"),
            ..Ours::DEFAULT
        }],
        // BCC's is a curses screen on kprobes.
        peers: &[Peer::bcc(Ready::Banner)],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["free(1)", "top(1)"],
};
