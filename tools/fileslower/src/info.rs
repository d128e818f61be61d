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
        // A threshold of 0 shows every call: the slow path (file, name, a
        // record) on each.
        ours: &[
            Ours {
                ready: Ready::Line("TIME(s)"),
                ..Ours::DEFAULT
            },
            Ours {
                label: "ours 0",
                args: &["0"],
                how: "release build, every call shown",
                ready: Ready::Line("TIME(s)"),
            },
        ],
        peers: &[
            Peer::bcc(Ready::Line("TIME(s)")),
            Peer::FLOOR_ENTER_EXIT,
            Peer::FLOOR_CLOCK_ENTER_EXIT,
            Peer::FLOOR_BPFTRACE_ENTER_EXIT,
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["read(2)", "write(2)"],
};
