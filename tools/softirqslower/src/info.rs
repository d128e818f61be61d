// What softirqslower is, for the registry (xtask reads this file too: only
// `registry` items here).
use registry::*;

pub const INFO: ToolInfo = ToolInfo {
    name: "softirqslower",
    aliases: &[],
    summary: "softirqs that waited from raise to handler, or ran, longer than a threshold",
    kind: Kind::Event,
    family: Family::Cpu,
    banner: "Tracing softirq latency higher than 10000 us... Hit Ctrl-C to end.",
    dry_runs: &[
        DryRun::DEFAULT,
        DryRun {
            args: "-c 0 100",
            label: "-c 0 100",
        },
    ],
    // Each hook form: what CI runs in its VMs.
    vm_tests: &["softirqslower_hook_variants"],
    bench: Some(Bench {
        workload: Workload::LossyTransfer,
        ours: &[Ours {
            ready: Ready::Line("TIME"),
            ..Ours::DEFAULT
        }],
        // libbpf-tools 0.26 and Debian's BCC have no softirqslower.
        peers: &[Peer {
            runs: PeerRun::BpftraceProgram {
                label: "bpftrace",
                how: "bpftrace -e, softirq runs and raise-to-entry waits over 10 ms, by CPU",
                args: &[],
                program: "tracepoint:irq:softirq_raise /!@r[cpu, args->vec]/ \
                          { @r[cpu, args->vec] = nsecs; } \
                          tracepoint:irq:softirq_entry { @e[cpu] = nsecs; \
                          if (@r[cpu, args->vec] && nsecs - @r[cpu, args->vec] > 10000000) \
                          { printf(\"raise %d %d\\n\", args->vec, cpu); } \
                          delete(@r[cpu, args->vec]); } \
                          tracepoint:irq:softirq_exit /@e[cpu]/ \
                          { if (nsecs - @e[cpu] > 10000000) { printf(\"run %d %d\\n\", \
                          args->vec, cpu); } delete(@e[cpu]); }",
            },
            ready: Ready::Line("Attaching"),
            reference: false,
        }],
        extras: &[],
    }),
    man: include_str!("../man.roff"),
    see_also: &[],
};
