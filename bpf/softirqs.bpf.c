// SPDX-License-Identifier: GPL-2.0
/* softirqs: time in each kind of softirq (or, -C, how many ran), by
 * vector, as totals or log2 histograms kept in the kernel. From
 * irq:softirq_entry and irq:softirq_exit, as tp_btf, raw_tp or the classic
 * tracepoints; a softirq never nests in another on its CPU, so the start
 * time is kept per CPU. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "hist.h"
#include "bits.bpf.h"
#include "maps.bpf.h"

/* Set by the front end. */
const volatile bool count_only = false;
/* The slots' unit: ns (-N) or µs. */
const volatile bool nanos = false;
const volatile bool fine = false;
/* -c: this CPU only; -1 all. */
const volatile __s32 target_cpu = -1;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} start SEC(".maps");

/* By vector. */
HIST_MAPS(__u32, struct hist, 32);

static __always_inline bool on_cpu(void)
{
	return target_cpu < 0 || bpf_get_smp_processor_id() == (__u32)target_cpu;
}

static __always_inline int entry(__u32 vec)
{
	__u32 zero = 0;
	struct hist *h;
	__u64 *ts;

	if (!on_cpu())
		return 0;
	if (count_only) {
		h = lookup_or_try_init(&hists, &vec, &zero_hist);
		if (h)
			__sync_fetch_and_add(&h->count, 1);
		return 0;
	}
	ts = bpf_map_lookup_elem(&start, &zero);
	if (ts)
		*ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int leave(__u32 vec)
{
	struct fine_hist *fh = 0;
	__u32 zero = 0;
	struct hist *h;
	__u64 *ts, delta;

	if (count_only || !on_cpu())
		return 0;
	ts = bpf_map_lookup_elem(&start, &zero);
	if (!ts || !*ts)
		return 0;
	delta = bpf_ktime_get_ns() - *ts;
	*ts = 0;
	h = lookup_or_try_init(&hists, &vec, &zero_hist);
	if (!h)
		return 0;
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &vec, &zero_fine);
	hist_add_exact_total(h, fh, delta, nanos ? 1 : 1000);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(si_btf_entry, unsigned int vec) { return entry(vec); }
SEC("tp_btf/softirq_exit")
int BPF_PROG(si_btf_exit, unsigned int vec) { return leave(vec); }

SEC("raw_tp/softirq_entry")
int BPF_PROG(si_raw_entry, unsigned int vec) { return entry(vec); }
SEC("raw_tp/softirq_exit")
int BPF_PROG(si_raw_exit, unsigned int vec) { return leave(vec); }

SEC("tracepoint/irq/softirq_entry")
int si_tp_entry(struct trace_event_raw_softirq *ctx) { return entry(ctx->vec); }
SEC("tracepoint/irq/softirq_exit")
int si_tp_exit(struct trace_event_raw_softirq *ctx) { return leave(ctx->vec); }

char LICENSE[] SEC("license") = "GPL";
