/* The off-CPU tools' filters (offcputime, offwaketime, wakeuptime): which
 * tasks going off CPU are followed (-p, -t, -u, -k, --state, the cgroup)
 * and which blocked times count (-m, -M). Include filters.bpf.h and
 * core_fixes.bpf.h first. */
#ifndef __OFFCPU_BPF_H
#define __OFFCPU_BPF_H

#ifndef PF_KTHREAD
#define PF_KTHREAD 0x00200000
#endif
#ifndef TASK_RUNNING
#define TASK_RUNNING 0
#endif
#ifndef TASK_DEAD
#define TASK_DEAD 0x80
#endif

const volatile bool user_threads_only = false;
const volatile bool kernel_threads_only = false;
const volatile bool filter_state = false;
/* With filter_state: 0 means "runnable" (preempted), else a state mask. */
const volatile long state_mask = 0;
const volatile __u64 min_block_ns = 1000;
const volatile __u64 max_block_ns = (__u64)-1;

/* Whether `t` (thread `tid` of `tgid`), going off CPU, is followed: it is
 * current, so the cgroup filter reads current's. */
static __always_inline bool offcpu_allowed(struct task_struct *t, __u32 tid, __u32 tgid)
{
	bool kthread;
	long state;

	if (!tid || !not_self(tgid))
		return false;
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &tgid))
		return false;
	if (!cgroup_allowed())
		return false;
	/* Its last switch: it never comes back. */
	if (task_state(t) & TASK_DEAD)
		return false;
	if (filter_tids && !bpf_map_lookup_elem(&tid_filter, &tid))
		return false;
	if (user_threads_only || kernel_threads_only) {
		kthread = BPF_CORE_READ(t, flags) & PF_KTHREAD;
		if (user_threads_only && kthread)
			return false;
		if (kernel_threads_only && !kthread)
			return false;
	}
	if (filter_state) {
		state = task_state(t);
		if (state_mask ? !(state & state_mask) : state != 0)
			return false;
	}
	return true;
}

/* Whether a time off CPU of `delta` ns counts (-m, -M). */
static __always_inline bool block_counts(__u64 delta)
{
	return (__s64)delta >= 0 && delta >= min_block_ns && delta <= max_block_ns;
}

#endif
