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
        // -m 0 shows every call: the slow path (file, name, a record) on
        // each.
        ours: &[
            Ours {
                label: "ours",
                args: &["-t", "ext4"],
                how: "release build",
                ready: Ready::Line("TIME"),
            },
            Ours {
                label: "ours -m 0",
                args: &["-t", "ext4", "-m", "0"],
                how: "release build, every call shown",
                ready: Ready::Line("TIME"),
            },
        ],
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
            Peer::FLOOR_ENTER_EXIT,
            Peer::FLOOR_CLOCK_ENTER_EXIT,
            Peer::FLOOR_BPFTRACE_ENTER_EXIT,
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["read(2)", "write(2)", "open(2)", "fsync(2)"],
};
