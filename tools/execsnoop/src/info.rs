// What execsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "execsnoop",
    aliases: &[],
    summary: "every exec() system-wide: command, pid, ppid, return value, arguments",
    kind: Kind::Event,
    family: Family::Process,
    banner: "Tracing exec()s... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "execsnoop_shows_exec_with",
        "execsnoop_hides_failed_exec",
        "execsnoop_classic_tracepoints",
        "execsnoop_dry_run",
    ],
    bench: Some(Bench {
        workload: Workload::ExecLoop { execs: 500 },
        ours: &[
            Ours {
                ready: Ready::FirstEvent,
                ..Ours::DEFAULT
            },
            // Container names cost nothing per event: the cgroup id comes
            // with the record, its name from a cache.
            Ours {
                label: "ours --containers",
                args: &["--containers"],
                how: "release build, --containers",
                ready: Ready::FirstEvent,
            },
        ],
        peers: &[
            Peer::libbpf_tools(Ready::FirstEvent),
            Peer::bpftrace(Ready::FirstEvent),
            Peer::bcc(Ready::FirstEvent),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["execve(2)", "execveat(2)"],
};
