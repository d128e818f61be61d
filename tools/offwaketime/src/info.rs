// What offwaketime is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "offwaketime",
    aliases: &[],
    summary: "time threads spend blocked, by their stack joined with the stack of the task that woke them",
    kind: Kind::Stack,
    family: Family::Cpu,
    banner: "Tracing blocked time (us) of all threads by user + kernel off-CPU and waker stack... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "ping_pong_joins",
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
            Peer::bpftrace(Ready::Line("Tracing blocked time")),
            // Needs kprobes, or raw tracepoints and kernel headers.
            Peer::bcc(Ready::Line("Tracing blocked time")),
            // What the waker's half costs beyond the blocked stacks.
            Peer {
                runs: PeerRun::OurTool {
                    label: "offcputime (ours)",
                    tool: "offcputime",
                    args: &[],
                },
                ready: Ready::Line("Tracing off-CPU time"),
                reference: true,
            },
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["flamegraph.pl(1)", "inferno-flamegraph(1)"],
};
