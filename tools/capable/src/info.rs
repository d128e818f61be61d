// What capable is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "capable",
    aliases: &[],
    summary: "capability checks: who asked for which capability, audited or not, and the verdict",
    kind: Kind::Event,
    family: Family::Process,
    banner: "Tracing capability checks... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-K -U -x",
            label: "-K -U -x",
        },
    ],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &["capable_"],
    bench: Some(Bench {
        workload: Workload::ChownLoop { chowns: 20_000 },
        ours: &[Ours {
            ready: Ready::FirstEvent,
            ..Ours::DEFAULT
        }],
        peers: &[
            Peer::libbpf_tools(Ready::FirstEvent),
            Peer::bpftrace(Ready::FirstEvent),
            Peer::bcc(Ready::FirstEvent),
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["capabilities(7)", "auditd(8)"],
};
