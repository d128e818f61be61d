// What argdist is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "argdist",
    aliases: &[],
    summary: "histograms (-H) and counts (-C) of arguments, return values, latencies, fields",
    kind: Kind::IntervalTable,
    family: Family::Process,
    banner: "Tracing probes... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun {
            args: "-C p:c:malloc():u64:arg1",
            label: "-C c:malloc",
        },
        DryRun {
            args: "-H r::vfs_read():u64:$latency",
            label: "-H r::vfs_read",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["argdist_"],
    // The cost per counted call: malloc's size counted, -p on the loop.
    bench: Some(Bench {
        workload: Workload::MallocLoop,
        ours: &[Ours {
            label: "ours",
            args: &["-p", "{pid}", "-C", "p:c:malloc(size_t size):size_t:size"],
            how: "release build, -p on the loop, -C of malloc's size",
            ready: Ready::Line("Tracing 1 probes"),
        }],
        peers: &[
            Peer {
                runs: PeerRun::Bcc {
                    args: &["-p", "{pid}", "-C", "p:c:malloc(size_t size):size_t:size"],
                },
                ready: Ready::HoldsPrograms,
                reference: false,
            },
            Peer::bpftrace_on_pid(
                "bpftrace",
                "a count per size in a map, -p on the loop",
                "uprobe:{libc}:malloc { @[arg0] = count(); }",
                false,
            ),
            Peer::empty_uprobe_on_malloc(),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["uprobes(7)"],
};
