// What profile is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "profile",
    aliases: &[],
    summary: "on-CPU stack sampling at a frequency: multi-line, folded, JSON, an SVG flame graph or a pprof profile",
    kind: Kind::Stack,
    family: Family::Cpu,
    banner: "Sampling at 49 Hertz of all threads by user + kernel stack... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    // The CPU hotplug test too: on 5.10 and 6.1 an event dies with its
    // CPU, and only the reopen brings the samples back.
    vm_tests: &[
        "folded_chain",
        "dwarf_unwinding",
        "kernel_frames_under",
        "a_cpu_that_goes_offline",
    ],
    bench: Some(Bench {
        workload: Workload::CpuJob { units: 20_000 },
        ours: &[Ours {
            label: "ours",
            args: &["-F", "99", "-f"],
            how: "release build, -F 99 -f",
            ready: Ready::Line("Sampling at"),
        }],
        peers: &[
            // Debian's libbpf-tools has no profile: listed as missing.
            Peer::libbpf_tools(Ready::HoldsPrograms),
            Peer {
                runs: PeerRun::BpftraceProgram {
                    label: "bpftrace",
                    how: "bpftrace -e, the issue's one-liner",
                    args: &[],
                    program: "profile:hz:99 { @[kstack, ustack, comm] = count(); }",
                },
                ready: Ready::Line("Attaching"),
                reference: false,
            },
            Peer {
                runs: PeerRun::Bcc { args: &["-F", "99"] },
                ready: Ready::Line("Sampling at"),
                reference: false,
            },
        ],
        // perf's pipeline is measured there, with its post-processing.
        extras: &[Extra::SamplingCost, Extra::MappingRecords],
    }),
    man: include_str!("../man.roff"),
    see_also: &["perf-record(1)", "flamegraph.pl(1)", "inferno-flamegraph(1)"],
};
