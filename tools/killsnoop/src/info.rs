// What killsnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "killsnoop",
    aliases: &["sigsnoop"],
    summary: "signals sent (kill, tkill, tgkill, the kernel's own): sender, signal, target, result",
    kind: Kind::Event,
    family: Family::Process,
    banner: "Tracing signals... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-k",
            label: "-k",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["killsnoop_"],
    bench: Some(Bench {
        workload: Workload::SignalLoop { signals: 20_000 },
        ours: &[
            Ours {
                ready: Ready::FirstEvent,
                ..Ours::DEFAULT
            },
            Ours {
                label: "ours -k",
                args: &["-k"],
                how: "release build, -k (the calls)",
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
    see_also: &["kill(2)", "tgkill(2)", "signal(7)"],
};
