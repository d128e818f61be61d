// SPDX-License-Identifier: GPL-2.0
/* wqlat: how long work waits on a kernel workqueue, from its queueing
 * (workqueue:workqueue_queue_work) to a worker starting it
 * (workqueue_execute_start), as log2 histograms kept in the kernel: one in
 * all, or per workqueue (-W) or work function (-F). As tp_btf or raw_tp
 * (the workqueue's name is read through the tracepoint's pool_workqueue,
 * which every kernel passes, where the classic tracepoint's record
 * changed its layout in 6.x). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "wqlat.h"
#include "bits.bpf.h"
#include "maps.bpf.h"

const volatile bool per_wq = false;
const volatile bool per_function = false;
/* -w: this workqueue only. */
const volatile bool filter_wq = false;
const volatile char targ_wq[WQ_NAME_MAX] = {};
/* The slots' unit: ns (-N), ms (-m) or µs. */
const volatile __u32 unit_ns = 1000;
const volatile bool fine = false;

struct wq_key key_layout = {};

HIST_MAPS(struct wq_key, struct hist, 10240);

struct queued {
	__u64 ts;
	struct wq_key key;
};

/* Work queued and not started yet, by its work_struct. LRU: work queued
 * before a cancel (never started) leaves room. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct queued);
} queued SEC(".maps");

static __always_inline bool wq_named(const char *name)
{
	for (int i = 0; i < WQ_NAME_MAX; i++) {
		if (name[i] != targ_wq[i])
			return false;
		if (!name[i])
			break;
	}
	return true;
}

static __always_inline int on_queue(struct pool_workqueue *pwq, struct work_struct *work)
{
	__u64 w = (__u64)work;
	struct queued q = {};

	if (per_wq || filter_wq) {
		BPF_CORE_READ_STR_INTO(&q.key.name, pwq, wq, name);
		if (filter_wq && !wq_named(q.key.name))
			return 0;
		if (!per_wq)
			__builtin_memset(q.key.name, 0, sizeof(q.key.name));
	}
	if (per_function)
		q.key.function = (__u64)BPF_CORE_READ(work, func);
	q.ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&queued, &w, &q, BPF_ANY);
	return 0;
}

static __always_inline int on_start(struct work_struct *work)
{
	__u64 w = (__u64)work, now = bpf_ktime_get_ns();
	struct fine_hist *fh = 0;
	struct wq_key key;
	struct queued *q;
	struct hist *h;
	__u64 delta;

	q = bpf_map_lookup_elem(&queued, &w);
	if (!q)
		return 0;
	delta = now - q->ts;
	key = q->key;
	bpf_map_delete_elem(&queued, &w);
	h = lookup_or_try_init(&hists, &key, &zero_hist);
	if (!h)
		return 0;
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &key, &zero_fine);
	hist_add_exact_total(h, fh, delta, unit_ns);
	return 0;
}

SEC("tp_btf/workqueue_queue_work")
int BPF_PROG(wq_btf_queue, int req_cpu, struct pool_workqueue *pwq, struct work_struct *work)
{
	return on_queue(pwq, work);
}

SEC("tp_btf/workqueue_execute_start")
int BPF_PROG(wq_btf_start, struct work_struct *work)
{
	return on_start(work);
}

SEC("raw_tp/workqueue_queue_work")
int BPF_PROG(wq_raw_queue, int req_cpu, struct pool_workqueue *pwq, struct work_struct *work)
{
	return on_queue(pwq, work);
}

SEC("raw_tp/workqueue_execute_start")
int BPF_PROG(wq_raw_start, struct work_struct *work)
{
	return on_start(work);
}

char LICENSE[] SEC("license") = "GPL";
