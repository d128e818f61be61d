// What fsdist is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "fsdist",
    aliases: &[
        "ext4dist",
        "xfsdist",
        "btrfsdist",
        "nfsdist",
        "zfsdist",
        "f2fsdist",
    ],
    summary: "latency histograms of one file system's reads, writes, opens, fsyncs and getattrs",
    kind: Kind::Histogram,
    family: Family::Files,
    banner: "Tracing ext4 operation latency... Hit Ctrl-C to end.",
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
        "fsdist_counts_each_operation",
        "fsdist_system_call_mode",
        "fsdist_kprobe_mode",
        "fsdist_dry_run",
    ],
    bench: Some(Bench {
        workload: Workload::ReadLoop { reads: 500_000 },
        ours: &[Ours {
            label: "ours",
            args: &["-t", "ext4"],
            how: "release build",
            ready: Ready::Line("Tracing ext4 operation latency"),
        }],
        peers: &[
            Peer {
                runs: PeerRun::LibbpfTools {
                    args: &["-t", "ext4"],
                },
                ready: Ready::Line("Tracing ext4 operation latency"),
                reference: false,
            },
            Peer {
                runs: PeerRun::Command {
                    label: "BCC ext4dist",
                    program: "ext4dist-bpfcc",
                    args: &[],
                },
                ready: Ready::Line("Tracing ext4 operation latency"),
                reference: false,
            },
            Peer::FLOOR_ENTER_EXIT,
            Peer::FLOOR_CLOCK_ENTER_EXIT,
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["read(2)", "write(2)", "open(2)", "fsync(2)", "stat(2)"],
};
