// What syscount is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "syscount",
    aliases: &[],
    summary: "system calls counted by call or process, with their total and average time (-L)",
    kind: Kind::IntervalTable,
    family: Family::Process,
    banner: "Tracing syscalls... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-L",
            label: "-L",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["syscount_counts", "syscount_variants"],
    // Beside the peers, the floors: one empty program at sys_exit (and at
    // sys_enter and sys_exit, what -L needs), as bpftrace attaches them
    // (0.17 has no raw tracepoints: the classic raw_syscalls ones).
    bench: Some(Bench {
        workload: Workload::GetppidLoop { calls: 2_000_000 },
        ours: &[
            Ours {
                ready: Ready::Line("Tracing syscalls"),
                ..Ours::DEFAULT
            },
            Ours {
                label: "ours -L",
                args: &["-L"],
                how: "release build, -L",
                ready: Ready::Line("Tracing syscalls"),
            },
        ],
        peers: &[
            Peer::libbpf_tools(Ready::Line("Tracing syscalls")),
            Peer {
                runs: PeerRun::Command {
                    label: "libbpf-tools -L",
                    program: "stdbuf",
                    args: &["-oL", "/usr/sbin/syscount", "-L"],
                },
                ready: Ready::Line("Tracing syscalls"),
                reference: false,
            },
            Peer::bcc(Ready::Line("Tracing syscalls")),
            Peer::floor_bpftrace(
                "floor: empty program at sys_exit",
                "tracepoint:raw_syscalls:sys_exit {}",
            ),
            Peer::floor_bpftrace(
                "floor: empty programs at sys_enter and sys_exit",
                "tracepoint:raw_syscalls:sys_enter {} tracepoint:raw_syscalls:sys_exit {}",
            ),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["syscall(2)", "strace(1)", "perf-trace(1)"],
};
