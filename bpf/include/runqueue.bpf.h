/* When each task became runnable (woken, or switched out while still
 * runnable), and how long it waited when it runs: runqlat's and
 * runqslower's. tp_btf programs keep the time in task local storage (no
 * hashing or locking on every switch); raw_tp programs, whose task
 * pointers are untrusted, in a hash map by thread (TASK_START_MAPS).
 * Include filters.bpf.h, task.bpf.h and core_fixes.bpf.h first. */
#ifndef __RUNQUEUE_BPF_H
#define __RUNQUEUE_BPF_H

#include "maps.bpf.h"

#define TASK_RUNNING 0

/* The waiting task's cgroup (v2 id) or an ancestor; 0: every cgroup. */
const volatile __u64 targ_cgroup_id = 0;

TASK_START_MAPS();

/* `t` is runnable from now, if it is traced (-p, -t, -c; never the tool). */
static __always_inline int rq_enqueue(struct task_struct *t, bool btf)
{
	__u32 tid = BPF_CORE_READ(t, pid), tgid = BPF_CORE_READ(t, tgid);
	__u64 ts, *slot;

	if (!tid || !not_self(tgid))
		return 0;
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &tgid))
		return 0;
	if (filter_tids && !bpf_map_lookup_elem(&tid_filter, &tid))
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

/* At a switch: `prev` waits again if it is still runnable (preempted);
 * `next`'s wait, in ns, or -1 where its start is not known. */
static __always_inline __s64 rq_switch(bool preempt, struct task_struct *prev,
				       struct task_struct *next, bool btf)
{
	__u32 tid;
	__u64 *tsp;
	__s64 delta;

	if (preempt || task_state(prev) == TASK_RUNNING)
		rq_enqueue(prev, btf);
	if (btf) {
		tsp = bpf_task_storage_get(&start_storage, next, 0, 0);
		if (!tsp || !*tsp)
			return -1;
		delta = bpf_ktime_get_ns() - *tsp;
		*tsp = 0;
	} else {
		tid = BPF_CORE_READ(next, pid);
		tsp = bpf_map_lookup_elem(&start, &tid);
		if (!tsp)
			return -1;
		delta = bpf_ktime_get_ns() - *tsp;
		bpf_map_delete_elem(&start, &tid);
	}
	return delta < 0 ? -1 : delta;
}

#endif
