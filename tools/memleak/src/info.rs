// What memleak is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

/// bpftrace with empty probes on the allocator: what the uprobe traps alone
/// cost, the floor for any uprobe-based memleak; together, then each alone.
const fn empty_probes(label: &'static str, how: &'static str, program: &'static str) -> Peer {
    Peer {
        runs: PeerRun::BpftraceProgram {
            label,
            how,
            args: &["-p", "{pid}"],
            program,
        },
        ready: Ready::Line("bench: attached"),
        reference: true,
    }
}

pub const INFO: ToolInfo = ToolInfo {
    name: "memleak",
    aliases: &[],
    summary: "outstanding allocations by stack, in a process (its allocator, by uprobes) or in the kernel",
    kind: Kind::Stack,
    family: Family::Memory,
    banner: "Attaching to kernel allocators, Ctrl+C to quit.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-p $$",
            label: "-p PID",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "reports_the_leaking_function",
        "kernel_mode",
        "dry_runs_load_both_modes",
        "every_allocator_path_counted_once",
        "dwarf_unwinding_charges",
    ],
    bench: Some(Bench {
        workload: Workload::MallocLoop,
        // A long interval: no periodic report inside the measured loop.
        ours: &[
            Ours {
                label: "ours",
                args: &["-p", "{pid}", "3600"],
                how: "every allocation",
                ready: Ready::Line("Attaching to pid"),
            },
            Ours {
                label: "ours -s 100",
                args: &["-p", "{pid}", "-s", "100", "3600"],
                how: "every 100th allocation sampled",
                ready: Ready::Line("Attaching to pid"),
            },
        ],
        peers: &[
            empty_probes(
                "bpftrace: empty probes",
                "malloc entry and return, free entry; all empty",
                "uprobe:{libc}:malloc {} uretprobe:{libc}:malloc {} uprobe:{libc}:free {}",
            ),
            empty_probes(
                "bpftrace: uprobe malloc",
                "malloc entry alone, empty",
                "uprobe:{libc}:malloc {}",
            ),
            empty_probes(
                "bpftrace: uretprobe malloc",
                "malloc return alone, empty",
                "uretprobe:{libc}:malloc {}",
            ),
            empty_probes(
                "bpftrace: uprobe free",
                "free entry alone, empty",
                "uprobe:{libc}:free {}",
            ),
            Peer {
                runs: PeerRun::LibbpfTools {
                    args: &["-p", "{pid}", "3600"],
                },
                ready: Ready::HoldsPrograms,
                reference: false,
            },
            Peer {
                runs: PeerRun::Bcc {
                    args: &["-p", "{pid}", "3600"],
                },
                ready: Ready::Line("Attaching to pid"),
                reference: false,
            },
        ],
        extras: &[Extra::LeakReports],
    }),
    man: include_str!("../man.roff"),
    see_also: &["malloc(3)", "valgrind(1)"],
};
