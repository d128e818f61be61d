// What fileslower is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "fileslower",
    aliases: &[],
    summary: "synchronous file reads and writes slower than a threshold, with the file's name",
    kind: Kind::Event,
    family: Family::Files,
    banner: "Tracing sync read/writes slower than the threshold... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "fileslower_every_read_and_write",
        "fileslower_system_call_mode",
        "fileslower_dry_run",
    ],
    bench: Some(Bench {
        workload: Workload::ReadLoop { reads: 500_000 },
        ours: &[Ours {
            ready: Ready::Line("TIME(s)"),
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::bcc(Ready::Line("TIME(s)")),
            Peer::floor_tp_btf(
                "floor: empty tp_btf programs at sys_enter and sys_exit",
                &["tp_btf/sys_enter", "tp_btf/sys_exit"],
            ),
            Peer::floor_bpftrace(
                "floor: empty bpftrace programs at sys_enter and sys_exit",
                "tracepoint:raw_syscalls:sys_enter {} tracepoint:raw_syscalls:sys_exit {}",
            ),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["read(2)", "write(2)"],
};
