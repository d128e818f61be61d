/* The record header's one filler (task.h). */
#ifndef __TASK_BPF_H
#define __TASK_BPF_H

#include <bpf/bpf_core_read.h>
#include "task.h"

/* Set by the front end with --containers: headers carry ns_pid. */
const volatile bool ns_pids = false;

/* A task's process id (`tgid` in the host's namespace) as its own pid
 * namespace numbers it: the level of the namespace it was made in, and its
 * number there; the host's own processes (level 0) cost no more reads. */
static __always_inline __u32 task_ns_tgid(struct task_struct *t, __u32 tgid)
{
	struct pid *p = BPF_CORE_READ(t, group_leader, thread_pid);
	unsigned int level = BPF_CORE_READ(p, level);
	struct upid up = {};

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
	h->ns_pid = ns_pids ? task_ns_tgid((struct task_struct *)bpf_get_current_task(), h->pid) : 0;
	h->pad = 0;
}

/* Another task's cgroup v2 id (what bpf_get_current_cgroup_id gives for
 * the current one): its default hierarchy cgroup's kernfs node id. */
static __always_inline __u64 task_cgroup_id(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

#endif
