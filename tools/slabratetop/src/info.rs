// What slabratetop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "slabratetop",
    aliases: &[],
    summary: "top for kernel slab caches: allocations and bytes per cache each interval",
    kind: Kind::IntervalTable,
    family: Family::Memory,
    banner: "Tracing... Output every 1 secs. Hit Ctrl-C to end",
    dry_runs: &[DryRun::DEFAULT],
    // Each source of allocations: what CI runs in its VMs.
    vm_tests: &["slabratetop_sources"],
    bench: Some(Bench {
        workload: Workload::OpenLoop { opens: 200_000 },
        ours: &[Ours {
            ready: Ready::Line("Tracing"),
            ..Ours::DEFAULT
        }],
        // libbpf-tools' and BCC's need kprobes.
        peers: &[
            Peer::libbpf_tools(Ready::Line("CACHE")),
            Peer::bcc(Ready::Line("Tracing")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["slabtop(1)"],
};
