// What opensnoop is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "opensnoop",
    aliases: &[],
    summary: "every open()/openat()/openat2()/creat(): pid, command, fd or errno, path",
    kind: Kind::Event,
    family: Family::Files,
    banner: "Tracing open()s... Hit Ctrl-C to end.",
    dry_runs: &[DryRun::DEFAULT],
    // Each hook variant: what CI runs in its VMs.
    vm_tests: &[
        "opensnoop_shows_open_of_unique_path",
        "opensnoop_btf_sys_exit",
        "opensnoop_classic_tracepoints",
        "opensnoop_entry_exit_fallback",
        "opensnoop_dry_run",
        // The header's cgroup and ns_pid (CO-RE reads of each kernel's layout).
        "opensnoop_names_each_opens_container_and_pod",
        "opensnoop_containers_give_the_pid_the_namespace_sees",
    ],
    bench: Some(Bench {
        workload: Workload::OpenLoop { opens: 200_000 },
        ours: &[
            Ours {
                ready: Ready::FirstEvent,
                ..Ours::DEFAULT
            },
            // Container names cost nothing per event: the cgroup id comes
            // with the record, its name from a cache.
            Ours {
                label: "ours --containers",
                args: &["--containers"],
                how: "release build, --containers",
                ready: Ready::FirstEvent,
            },
        ],
        peers: &[
            Peer::libbpf_tools(Ready::FirstEvent),
            Peer::bpftrace(Ready::FirstEvent),
            Peer::bcc(Ready::FirstEvent),
            Peer::FLOOR_EXIT,
        ],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &["open(2)", "openat2(2)"],
};
