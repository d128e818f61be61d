// What trace is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "trace",
    aliases: &[],
    summary: "a line per call or event, with a message formatted from its arguments, and a filter",
    kind: Kind::Event,
    family: Family::Process,
    banner: "Tracing... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun {
            args: "c:malloc",
            label: "c:malloc",
        },
        DryRun {
            args: "t:syscalls:sys_enter_openat",
            label: "t:…",
        },
        DryRun {
            args: "r::vfs_read",
            label: "r::vfs_read",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["trace_"],
    // The cost per call of a probe whose filter (made in the kernel by
    // all three) keeps nothing: malloc(64) with (arg1 == 1), -p on the loop.
    bench: Some(Bench {
        workload: Workload::MallocLoop,
        ours: &[Ours {
            label: "ours",
            args: &["-p", "{pid}", "c:malloc (arg1 == 1) \"%d\", arg1"],
            how: "release build, -p on the loop, a filter that keeps no call",
            ready: Ready::Line("PID"),
        }],
        peers: &[
            Peer {
                runs: PeerRun::Bcc {
                    args: &["-p", "{pid}", "c:malloc (arg1 == 1) \"%d\", arg1"],
                },
                ready: Ready::Line("PID"),
                reference: false,
            },
            Peer::bpftrace_on_pid(
                "bpftrace",
                "the same filter and printf, -p on the loop",
                "uprobe:{libc}:malloc /arg0 == 1/ { printf(\"%d\\n\", arg0); }",
                false,
            ),
            Peer::empty_uprobe_on_malloc(),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["uprobes(7)", "perf-probe(1)"],
};
