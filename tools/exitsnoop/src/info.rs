// What exitsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "exitsnoop",
    aliases: &[],
    summary: "every process (or thread) exit: its code or killing signal, core dump, age, parent",
    kind: Kind::Event,
    family: Family::Process,
    banner: "Tracing process exits... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "exitsnoop_codes_signals_and_ages",
        "exitsnoop_hook_variants",
    ],
    bench: Some(Bench {
        // Each exec'd program exits: one line each.
        workload: Workload::ExecLoop { execs: 500 },
        ours: &[Ours {
            ready: Ready::FirstEvent,
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::FirstEvent),
            Peer::bcc(Ready::FirstEvent),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["exit(3)", "wait(2)", "signal(7)"],
};
