// SPDX-License-Identifier: GPL-2.0
/* softirqslower: softirqs that waited or ran longer than a threshold: the
 * delay from a vector's first raise to its handler's entry, and the
 * handler's run (irq:softirq_raise, softirq_entry, softirq_exit; tp_btf,
 * raw_tp or the classic tracepoints). A softirq is raised and run on one
 * CPU, and handlers never nest on a CPU, so the times are kept per CPU. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "softirqslower.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"

/* The kernel's NR_SOFTIRQS is 10; room for more. */
#define VECTORS 16

const volatile __u64 min_ns = 10000000;
/* -c: this CPU only; -1 all. */
const volatile __s32 target_cpu = -1;

struct event event_layout = {};
enum softirq_stage stage_layout;

/* The first raise of each vector not yet run, by CPU; 0: none pending. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VECTORS);
	__type(key, __u32);
	__type(value, __u64);
} raised SEC(".maps");

/* The running handler's start, by CPU; 0: none. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} entered SEC(".maps");

static __always_inline bool on_cpu(__u32 cpu)
{
	return target_cpu < 0 || cpu == (__u32)target_cpu;
}

static __always_inline void report(__u32 stage, __u32 vec, __u32 cpu, __u64 delta)
{
	struct event e = {};

	if (delta < min_ns || !cgroup_allowed())
		return;
	task_header_now(&e.task);
	e.delta_ns = delta;
	e.stage = stage;
	e.vec = vec;
	e.cpu = cpu;
	emit(&e, sizeof(e));
}

static __always_inline int on_raise(__u32 vec)
{
	__u64 *ts = bpf_map_lookup_elem(&raised, &vec);

	if (!ts || !on_cpu(bpf_get_smp_processor_id()))
		return 0;
	/* The first raise since the vector last ran: the wait is from it. */
	if (!*ts)
		*ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_entry(__u32 vec)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	__u64 now, *ts;

	if (!on_cpu(cpu))
		return 0;
	now = bpf_ktime_get_ns();
	ts = bpf_map_lookup_elem(&raised, &vec);
	if (ts && *ts) {
		report(STAGE_RAISE_TO_ENTRY, vec, cpu, now - *ts);
		*ts = 0;
	}
	ts = bpf_map_lookup_elem(&entered, &zero);
	if (ts)
		*ts = now;
	return 0;
}

static __always_inline int on_exit(__u32 vec)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	__u64 *ts = bpf_map_lookup_elem(&entered, &zero);

	if (!ts || !*ts || !on_cpu(cpu))
		return 0;
	report(STAGE_RUNTIME, vec, cpu, bpf_ktime_get_ns() - *ts);
	*ts = 0;
	return 0;
}

SEC("tp_btf/softirq_raise")
int BPF_PROG(raise_btf, unsigned int vec) { return on_raise(vec); }
SEC("tp_btf/softirq_entry")
int BPF_PROG(entry_btf, unsigned int vec) { return on_entry(vec); }
SEC("tp_btf/softirq_exit")
int BPF_PROG(exit_btf, unsigned int vec) { return on_exit(vec); }

SEC("raw_tp/softirq_raise")
int BPF_PROG(raise_raw, unsigned int vec) { return on_raise(vec); }
SEC("raw_tp/softirq_entry")
int BPF_PROG(entry_raw, unsigned int vec) { return on_entry(vec); }
SEC("raw_tp/softirq_exit")
int BPF_PROG(exit_raw, unsigned int vec) { return on_exit(vec); }

SEC("tracepoint/irq/softirq_raise")
int raise_tp(struct trace_event_raw_softirq *ctx) { return on_raise(ctx->vec); }
SEC("tracepoint/irq/softirq_entry")
int entry_tp(struct trace_event_raw_softirq *ctx) { return on_entry(ctx->vec); }
SEC("tracepoint/irq/softirq_exit")
int exit_tp(struct trace_event_raw_softirq *ctx) { return on_exit(ctx->vec); }

char LICENSE[] SEC("license") = "GPL";
