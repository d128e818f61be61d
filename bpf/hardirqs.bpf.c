// SPDX-License-Identifier: GPL-2.0
/* hardirqs: time in each IRQ handler (or, -C, how many ran), by the
 * handler's name, as totals or log2 histograms kept in the kernel. From
 * irq:irq_handler_entry and irq:irq_handler_exit, as tp_btf or raw_tp (the
 * handler's irqaction at both), else the classic tracepoints (its name at
 * entry only: kept per CPU for the exit). A handler that did not handle
 * the interrupt (IRQ_NONE: a shared line, another device's) is not
 * counted, as BCC's. Handlers do not nest on a CPU. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "hist.h"
#include "hardirqs.h"
#include "bits.bpf.h"
#include "maps.bpf.h"
#include "filters.bpf.h"

#define IRQ_NONE 0

/* Set by the front end. */
const volatile bool count_only = false;
const volatile bool nanos = false;
const volatile bool fine = false;
/* -c: this CPU only; -1 all. */
const volatile __s32 target_cpu = -1;

struct irq_key key_layout = {};

struct start {
	__u64 ts;
	struct irq_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct start);
} starts SEC(".maps");

HIST_MAPS(struct irq_key, struct hist, 1024);

static __always_inline bool on_cpu(void)
{
	return target_cpu < 0 || bpf_get_smp_processor_id() == (__u32)target_cpu;
}

/* `name`: the handler's, in the kernel (irqaction's, or the classic
 * record's copy). --cgroup judges the task the interrupt interrupted, as
 * libbpf-tools' -c does. */
static __always_inline int entry(const char *name)
{
	struct irq_key key = {};
	__u32 zero = 0;
	struct start *s;
	struct hist *h;

	if (!on_cpu() || !cgroup_allowed())
		return 0;
	if (count_only) {
		bpf_probe_read_kernel_str(key.name, sizeof(key.name), name);
		h = lookup_or_try_init(&hists, &key, &zero_hist);
		if (h)
			__sync_fetch_and_add(&h->count, 1);
		return 0;
	}
	s = bpf_map_lookup_elem(&starts, &zero);
	if (!s)
		return 0;
	bpf_probe_read_kernel_str(s->key.name, sizeof(s->key.name), name);
	s->ts = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int leave(int ret)
{
	struct fine_hist *fh = 0;
	__u32 zero = 0;
	struct start *s;
	struct hist *h;
	__u64 delta;

	if (count_only || !on_cpu())
		return 0;
	s = bpf_map_lookup_elem(&starts, &zero);
	if (!s || !s->ts)
		return 0;
	delta = bpf_ktime_get_ns() - s->ts;
	s->ts = 0;
	if (ret == IRQ_NONE)
		return 0;
	h = lookup_or_try_init(&hists, &s->key, &zero_hist);
	if (!h)
		return 0;
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &s->key, &zero_fine);
	hist_add_exact_total(h, fh, delta, nanos ? 1 : 1000);
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(hi_btf_entry, int irq, struct irqaction *action)
{
	return entry(BPF_CORE_READ(action, name));
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(hi_btf_exit, int irq, struct irqaction *action, int ret)
{
	return leave(ret);
}

SEC("raw_tp/irq_handler_entry")
int BPF_PROG(hi_raw_entry, int irq, struct irqaction *action)
{
	return entry(BPF_CORE_READ(action, name));
}

SEC("raw_tp/irq_handler_exit")
int BPF_PROG(hi_raw_exit, int irq, struct irqaction *action, int ret)
{
	return leave(ret);
}

SEC("tracepoint/irq/irq_handler_entry")
int hi_tp_entry(struct trace_event_raw_irq_handler_entry *ctx)
{
	return entry((const char *)ctx + (ctx->__data_loc_name & 0xffff));
}

SEC("tracepoint/irq/irq_handler_exit")
int hi_tp_exit(struct trace_event_raw_irq_handler_exit *ctx)
{
	return leave(ctx->ret);
}

char LICENSE[] SEC("license") = "GPL";
