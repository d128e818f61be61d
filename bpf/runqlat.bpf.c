// SPDX-License-Identifier: GPL-2.0
/* runqlat: time from a task becoming runnable (woken, or preempted while
 * still runnable) to it running, as log2 histograms kept in the kernel
 * (runqueue.bpf.h keeps the times). Each hook exists as tp_btf (preferred)
 * and raw_tp; one kind is loaded. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "runqlat.h"
#include "bits.bpf.h"
#include "core_fixes.bpf.h"
#include "filters.bpf.h"
#include "maps.bpf.h"
#include "task.bpf.h"
#include "runqueue.bpf.h"

const volatile bool per_process = false;
const volatile bool per_thread = false;
const volatile bool per_pidns = false;
const volatile bool per_container = false;
const volatile bool millis = false;
const volatile bool fine = false;

HIST_MAPS(__u64, struct rq_hist, 10240);

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	struct fine_hist *fh = 0;
	struct rq_hist *h;
	__u32 tid = BPF_CORE_READ(next, pid);
	__u64 key = 0;
	__s64 delta = rq_switch(preempt, prev, next, btf);

	if (delta < 0)
		return 0;
	delta /= millis ? 1000000 : 1000;

	if (per_process)
		key = BPF_CORE_READ(next, tgid);
	else if (per_thread)
		key = tid;
	else if (per_pidns)
		key = BPF_CORE_READ(next, nsproxy, pid_ns_for_children, ns.inum);
	else if (per_container)
		key = task_cgroup_id(next);
	h = lookup_or_try_init(&hists, &key, &zero_hist);
	if (!h)
		return 0;
	/* The comm at the first sample: the front end prefers the live one
	 * (a first run can precede exec) and falls back to this after exit. */
	if ((per_process || per_thread) && !h->comm[0])
		BPF_CORE_READ_STR_INTO(&h->comm, next, comm);
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &key, &zero_fine);
	hist_add(&h->hist, fh, delta);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(rq_btf_wakeup, struct task_struct *p) { return rq_enqueue(p, true); }
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(rq_btf_wakeup_new, struct task_struct *p) { return rq_enqueue(p, true); }
SEC("tp_btf/sched_switch")
int BPF_PROG(rq_btf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, true);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(rq_raw_wakeup, struct task_struct *p) { return rq_enqueue(p, false); }
SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(rq_raw_wakeup_new, struct task_struct *p) { return rq_enqueue(p, false); }
SEC("raw_tp/sched_switch")
int BPF_PROG(rq_raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, false);
}

char LICENSE[] SEC("license") = "GPL";
