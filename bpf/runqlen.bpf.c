// SPDX-License-Identifier: GPL-2.0
/* runqlen: the length of each CPU's run queue, sampled by a perf event on
 * every CPU (99 Hz by default), as a linear histogram kept in the kernel:
 * how many tasks wait to run beside the one running. Read from the CPU's
 * own struct rq (its nr_running: every scheduling class), reached through
 * the current task's CFS queue, not from that queue itself as BCC's does,
 * which under cgroups holds only the task's group. (The runqueues per-CPU
 * variable would be direct, but the kernel resolves such a symbol through
 * kallsyms, which lacks data without CONFIG_KALLSYMS_ALL.) */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hist.h"
#include "maps.bpf.h"

/* Set by the front end: a histogram per CPU (-C). */
const volatile bool per_cpu = false;

/* The CPU's run queue, from the task running on it. */
static __always_inline struct rq *this_rq(void)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	struct cfs_rq *cfs = BPF_CORE_READ(t, se.cfs_rq);

	if (!cfs)
		return 0;
	/* With group scheduling a CFS queue names its rq; without, the task's
	 * queue is the rq's own, embedded in it. */
	if (bpf_core_field_exists(cfs->rq))
		return BPF_CORE_READ(cfs, rq);
	return (void *)cfs - bpf_core_field_offset(struct rq, cfs);
}

/* Keyed by 0, or the CPU with -C; slot N holds the samples with N waiting
 * (the last slot, more). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct hist);
} hists SEC(".maps");

static struct hist zero_hist;

SEC("perf_event")
int rl_sample(struct bpf_perf_event_data *ctx)
{
	__u32 key = per_cpu ? bpf_get_smp_processor_id() : 0;
	struct rq *rq = this_rq();
	unsigned int running;
	__u32 waiting, slot;
	struct hist *h;

	/* No CFS queue: the idle task, which runs only while nothing else
	 * can: none waiting. */
	running = rq ? BPF_CORE_READ(rq, nr_running) : 0;
	waiting = running > 0 ? running - 1 : 0;

	h = lookup_or_try_init(&hists, &key, &zero_hist);
	if (!h)
		return 0;
	slot = waiting < MAX_SLOTS ? waiting : MAX_SLOTS - 1;
	/* Kept from the compiler, which would index with the unclamped value
	 * the verifier cannot bound. */
	barrier_var(slot);
	if (slot < MAX_SLOTS)
		__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->total, waiting);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
