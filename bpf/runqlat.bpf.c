// SPDX-License-Identifier: GPL-2.0
/* runqlat: time from a task becoming runnable (woken, or preempted while
 * still runnable) to it running, as log2 histograms kept in the kernel.
 * Each hook exists as tp_btf (preferred) and raw_tp; one kind is loaded. */
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

#define TASK_RUNNING 0

const volatile bool per_process = false;
const volatile bool per_thread = false;
const volatile bool per_pidns = false;
const volatile bool per_container = false;
const volatile bool millis = false;
const volatile bool fine = false;
/* The woken task's cgroup (v2 id, the directory's inode) or an ancestor. */
const volatile __u64 targ_cgroup_id = 0;

/* When each task became runnable. The tp_btf programs keep it in task
 * local storage (no hashing or locking on every switch); raw_tp programs,
 * whose task pointers are untrusted, in a hash map by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} start_storage SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} start SEC(".maps");

HIST_MAPS(__u64, struct rq_hist, 10240);

static __always_inline int enqueue(struct task_struct *t, bool btf)
{
	__u32 tid = BPF_CORE_READ(t, pid), tgid = BPF_CORE_READ(t, tgid);
	__u64 ts, *slot;

	if (!tid || !not_self(tgid))
		return 0;
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &tgid))
		return 0;
	if (targ_cgroup_id && !task_in_cgroup(t, targ_cgroup_id))
		return 0;
	ts = bpf_ktime_get_ns();
	if (btf) {
		slot = bpf_task_storage_get(&start_storage, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (slot)
			*slot = ts;
	} else {
		bpf_map_update_elem(&start, &tid, &ts, BPF_ANY);
	}
	return 0;
}

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	struct fine_hist *fh = 0;
	struct rq_hist *h;
	__u32 tid;
	__u64 key = 0;
	__u64 *tsp, delta;

	/* Preempted, or switched out while runnable: still on the run queue. */
	if (preempt || task_state(prev) == TASK_RUNNING)
		enqueue(prev, btf);

	tid = BPF_CORE_READ(next, pid);
	if (btf) {
		tsp = bpf_task_storage_get(&start_storage, next, 0, 0);
		if (!tsp || !*tsp)
			return 0;
		delta = bpf_ktime_get_ns() - *tsp;
		*tsp = 0;
	} else {
		tsp = bpf_map_lookup_elem(&start, &tid);
		if (!tsp)
			return 0;
		delta = bpf_ktime_get_ns() - *tsp;
		bpf_map_delete_elem(&start, &tid);
	}
	if ((__s64)delta < 0)
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
int BPF_PROG(rq_btf_wakeup, struct task_struct *p) { return enqueue(p, true); }
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(rq_btf_wakeup_new, struct task_struct *p) { return enqueue(p, true); }
SEC("tp_btf/sched_switch")
int BPF_PROG(rq_btf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, true);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(rq_raw_wakeup, struct task_struct *p) { return enqueue(p, false); }
SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(rq_raw_wakeup_new, struct task_struct *p) { return enqueue(p, false); }
SEC("raw_tp/sched_switch")
int BPF_PROG(rq_raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, false);
}

char LICENSE[] SEC("license") = "GPL";
