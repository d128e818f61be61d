// What funclatency is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "funclatency",
    aliases: &[],
    summary:
        "time per call of user or kernel functions (wildcards, -F per function) as log2 histograms",
    kind: Kind::Histogram,
    family: Family::Process,
    banner: "Tracing functions... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun {
            args: "c:malloc",
            label: "c:malloc",
        },
        DryRun {
            args: "vfs_read",
            label: "vfs_read",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["funclatency_"],
    // The cost per timed call: malloc, -p on a loop of malloc+free pairs
    // (an entry and a return probe each).
    bench: Some(Bench {
        workload: Workload::MallocLoop,
        ours: &[Ours {
            label: "ours",
            args: &["-p", "{pid}", "c:malloc"],
            how: "release build, -p on the loop",
            ready: Ready::Line("Tracing 1 functions"),
        }],
        peers: &[
            Peer {
                runs: PeerRun::LibbpfTools {
                    args: &["-p", "{pid}", "c:malloc"],
                },
                ready: Ready::HoldsPrograms,
                reference: false,
            },
            Peer::bcc_on_malloc(),
            Peer::bpftrace_on_pid(
                "bpftrace",
                "entry time by thread, a hist() at return, -p on the loop",
                "uprobe:{libc}:malloc { @s[tid] = nsecs; } \
                 uretprobe:{libc}:malloc /@s[tid]/ { @ns = hist(nsecs - @s[tid]); delete(@s[tid]); }",
                false,
            ),
            Peer::bpftrace_on_pid(
                "floor: empty uprobe and uretprobe",
                "bpftrace, empty programs at malloc's entry and return",
                "uprobe:{libc}:malloc {} uretprobe:{libc}:malloc {}",
                true,
            ),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["uprobes(7)", "perf-probe(1)"],
};
