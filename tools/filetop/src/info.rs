// What filetop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "filetop",
    aliases: &[],
    summary: "top files: reads, writes and Kbytes per thread and file, each interval",
    kind: Kind::IntervalTable,
    family: Family::Files,
    banner: "Tracing... Output every 1 secs. Hit Ctrl-C to end",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "filetop_counts_a_copy",
        "filetop_system_call_mode",
        "filetop_dry_run",
    ],
    bench: Some(Bench {
        workload: Workload::ReadLoop { reads: 500_000 },
        ours: &[Ours {
            ready: Ready::Line("Tracing"),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing")),
            Peer::bcc(Ready::Line("Tracing")),
            // filetop's own: one program, at sys_exit.
            Peer::FLOOR_EXIT,
            Peer::FLOOR_ENTER_EXIT,
            Peer::FLOOR_BPFTRACE_ENTER_EXIT,
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["read(2)", "write(2)", "iotop(8)"],
};
