// What wakeuptime is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "wakeuptime",
    aliases: &[],
    summary: "time threads spend asleep, from sleep to wakeup, by the stack of the task that woke them",
    kind: Kind::Stack,
    family: Family::Cpu,
    banner: "Tracing blocked time (us) of all threads by user + kernel waker stack... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "ping_pong_charges",
        "raw_tp_fallback",
        "dwarf_unwinding_names_the_waker",
    ],
    bench: Some(Bench {
        workload: Workload::SchedPipe { messages: 100_000 },
        ours: &[Ours {
            ready: Ready::Line("Tracing blocked time"),
            ..Ours::DEFAULT
        }],
        peers: &[
            // Prints its banner at once, buffered: it holds its programs.
            Peer::libbpf_tools(Ready::HoldsPrograms),
            Peer::bpftrace(Ready::Line("Tracing blocked time")),
            Peer::bcc(Ready::Line("Tracing blocked time")),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["flamegraph.pl(1)", "inferno-flamegraph(1)"],
};
