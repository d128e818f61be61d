// SPDX-License-Identifier: GPL-2.0
/* cpudist: how long tasks run each time they are scheduled (or, -O, how
 * long they stay off the CPU between runs), as log2 histograms kept in the
 * kernel. One program on sched_switch: the task leaving ends its run (or
 * starts its time off), the task arriving starts its run (or ends its time
 * off). Each exists as tp_btf (start times in task storage) and raw_tp (a
 * hash map by thread). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "cpudist.h"
#include "bits.bpf.h"
#include "filters.bpf.h"
#include "maps.bpf.h"
#include "task.bpf.h"

const volatile bool off_cpu = false;
const volatile bool include_idle = false;
const volatile bool per_process = false;
const volatile bool per_thread = false;
const volatile bool per_container = false;
const volatile bool millis = false;
const volatile bool fine = false;
/* The task's cgroup (v2 id) or an ancestor; 0: every cgroup. */
const volatile __u64 targ_cgroup_id = 0;

/* The raw_tp map is keyed by thread, the idle tasks (all tid 0) by CPU
 * (start_key). */
TASK_START_MAPS();

HIST_MAPS(__u64, struct cpu_hist, 10240);

static __always_inline bool traced(struct task_struct *t, __u32 tid)
{
	__u32 tgid = BPF_CORE_READ(t, tgid);

	if (!tid)
		return include_idle;
	if (!not_self(tgid))
		return false;
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &tgid))
		return false;
	if (targ_cgroup_id && !task_in_cgroup(t, targ_cgroup_id))
		return false;
	return true;
}

static __always_inline __u32 start_key(__u32 tid)
{
	return tid ? tid : 0x80000000U | bpf_get_smp_processor_id();
}

static __always_inline void mark(struct task_struct *t, __u32 tid, __u64 now, bool btf)
{
	__u64 *slot;
	__u32 key;

	if (!traced(t, tid))
		return;
	if (btf) {
		slot = bpf_task_storage_get(&start_storage, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (slot)
			*slot = now;
	} else {
		key = start_key(tid);
		bpf_map_update_elem(&start, &key, &now, BPF_ANY);
	}
}

static __always_inline void account(struct task_struct *t, __u32 tid, __u64 now, bool btf)
{
	struct fine_hist *fh = 0;
	struct cpu_hist *h;
	__u64 *tsp, delta, key = 0;
	__u32 skey;

	if (btf) {
		tsp = bpf_task_storage_get(&start_storage, t, 0, 0);
		if (!tsp || !*tsp)
			return;
		delta = now - *tsp;
		*tsp = 0;
	} else {
		skey = start_key(tid);
		tsp = bpf_map_lookup_elem(&start, &skey);
		if (!tsp)
			return;
		delta = now - *tsp;
		bpf_map_delete_elem(&start, &skey);
	}
	if ((__s64)delta < 0)
		return;
	delta /= millis ? 1000000 : 1000;

	if (per_process)
		key = BPF_CORE_READ(t, tgid);
	else if (per_thread)
		key = tid;
	else if (per_container)
		key = task_cgroup_id(t);
	h = lookup_or_try_init(&hists, &key, &zero_hist);
	if (!h)
		return;
	if ((per_process || per_thread) && !h->comm[0])
		BPF_CORE_READ_STR_INTO(&h->comm, t, comm);
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &key, &zero_fine);
	hist_add(&h->hist, fh, delta);
}

static __always_inline int on_switch(struct task_struct *prev, struct task_struct *next, bool btf)
{
	__u32 prev_tid = BPF_CORE_READ(prev, pid), next_tid = BPF_CORE_READ(next, pid);
	__u64 now = bpf_ktime_get_ns();

	if (off_cpu) {
		mark(prev, prev_tid, now, btf);
		account(next, next_tid, now, btf);
	} else {
		account(prev, prev_tid, now, btf);
		mark(next, next_tid, now, btf);
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(cd_btf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next, true);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(cd_raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next, false);
}

char LICENSE[] SEC("license") = "GPL";
