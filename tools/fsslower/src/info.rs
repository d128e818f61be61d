// What fsslower is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "fsslower",
    aliases: &["ext4slower", "xfsslower", "btrfsslower", "nfsslower"],
    summary: "reads, writes, opens and fsyncs of one file system slower than a threshold",
    kind: Kind::Event,
    family: Family::Files,
    banner: "Tracing file system operations slower than the threshold... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun {
            args: "-t ext4",
            label: "-t ext4",
        },
        DryRun {
            args: "-t xfs",
            label: "-t xfs",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "fsslower_shows_each_operation",
        "fsslower_threshold",
        "fsslower_system_call_mode",
        "fsslower_kprobe_mode",
        "fsslower_dry_run",
    ],
    bench: Some(Bench {
        workload: Workload::ReadLoop { reads: 500_000 },
        ours: &[Ours {
            label: "ours",
            args: &["-t", "ext4"],
            how: "release build",
            ready: Ready::Line("TIME"),
        }],
        peers: &[
            Peer {
                runs: PeerRun::LibbpfTools {
                    args: &["-t", "ext4"],
                },
                ready: Ready::Line("TIME"),
                reference: false,
            },
            Peer {
                runs: PeerRun::Command {
                    label: "BCC ext4slower",
                    program: "ext4slower-bpfcc",
                    args: &[],
                },
                ready: Ready::Line("TIME"),
                reference: false,
            },
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
    see_also: &["read(2)", "write(2)", "open(2)", "fsync(2)"],
};
