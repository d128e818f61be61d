/* The record header's one filler (task.h). */
#ifndef __TASK_BPF_H
#define __TASK_BPF_H

#include <bpf/bpf_core_read.h>
#include "task.h"

/* Set by the front end with --containers: headers carry ns_pid. */
const volatile bool ns_pids = false;

/* The current process's id as its own pid namespace numbers it (`tgid` is
 * the host's): its number at the level of the namespace it was made in.
 * The task's pointers are followed with direct loads where the kernel has
 * bpf_get_current_task_btf (5.11+; each probe read is a helper call, and
 * this runs on every event with --containers), else with probe reads.
 * A global function, so that the verifier checks it once and not at every
 * call site inlined in every path (each BTF load walks task_struct's
 * members: 7 ms more to load opensnoop when it was inlined). */
__noinline __u32 current_ns_tgid(__u32 tgid)
{
	struct upid up = {};
	unsigned int level;
	struct pid *p;

	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)) {
		p = bpf_get_current_task_btf()->group_leader->thread_pid;
		level = p->level;
	} else {
		p = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), group_leader,
				  thread_pid);
		level = BPF_CORE_READ(p, level);
	}
	if (!level)
		return tgid;
	/* Namespaces nest at most 32 deep (MAX_PID_NS_LEVEL). */
	bpf_core_read(&up, sizeof(up), &p->numbers[level & 31]);
	return up.nr;
}

/* The current task, now. */
static __always_inline void task_header_now(struct task_header *h)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->ts_ns = bpf_ktime_get_ns();
	h->cgroup_id = bpf_get_current_cgroup_id();
	h->pid = id >> 32;
	h->tid = (__u32)id;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
	h->ns_pid = ns_pids ? current_ns_tgid(h->pid) : 0;
	h->pad = 0;
}

/* Another task's cgroup v2 id (what bpf_get_current_cgroup_id gives for
 * the current one): its default hierarchy cgroup's kernfs node id. */
static __always_inline __u64 task_cgroup_id(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

/* Another task's process id as its own pid namespace numbers it (as
 * current_ns_tgid for the current one), by probe reads. */
static __always_inline __u32 task_ns_tgid(struct task_struct *t, __u32 tgid)
{
	struct pid *p = BPF_CORE_READ(t, group_leader, thread_pid);
	unsigned int level = BPF_CORE_READ(p, level);
	struct upid up = {};

	if (!level)
		return tgid;
	bpf_core_read(&up, sizeof(up), &p->numbers[level & 31]);
	return up.nr;
}

/* Another task than the current one (a woken task, the next to run), now. */
static __always_inline void task_header_of(struct task_header *h, struct task_struct *t)
{
	h->ts_ns = bpf_ktime_get_ns();
	h->cgroup_id = task_cgroup_id(t);
	h->pid = BPF_CORE_READ(t, tgid);
	h->tid = BPF_CORE_READ(t, pid);
	BPF_CORE_READ_STR_INTO(&h->comm, t, comm);
	h->ns_pid = ns_pids ? task_ns_tgid(t, h->pid) : 0;
	h->pad = 0;
}

/* Whether a cgroup v2 is `id` or below it, by walking up its parents (16
 * levels at most): for another task's cgroup than the current one's (a woken
 * task, a switched-out one; task_in_cgroup), or a cgroup a hook is given
 * (writeback's), where bpf_current_task_under_cgroup cannot judge it. */
static __always_inline bool cgroup_in(struct cgroup *cg, __u64 id)
{
	__u64 self_offset = bpf_core_field_offset(struct cgroup, self);
	int i;

	for (i = 0; i < 16 && cg; i++) {
		if (BPF_CORE_READ(cg, kn, id) == id)
			return true;
		cg = (void *)BPF_CORE_READ(cg, self.parent);
		if (cg)
			cg = (void *)cg - self_offset;
	}
	return false;
}

static __always_inline bool task_in_cgroup(struct task_struct *t, __u64 id)
{
	return cgroup_in(BPF_CORE_READ(t, cgroups, dfl_cgrp), id);
}

#endif
