/* The record header's one filler (task.h). */
#ifndef __TASK_BPF_H
#define __TASK_BPF_H

#include <bpf/bpf_core_read.h>
#include "task.h"

/* The current task, now. */
static __always_inline void task_header_now(struct task_header *h)
{
	__u64 id = bpf_get_current_pid_tgid();

	h->ts_ns = bpf_ktime_get_ns();
	h->cgroup_id = bpf_get_current_cgroup_id();
	h->pid = id >> 32;
	h->tid = (__u32)id;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
}

/* Another task's cgroup v2 id (what bpf_get_current_cgroup_id gives for
 * the current one): its default hierarchy cgroup's kernfs node id. */
static __always_inline __u64 task_cgroup_id(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

#endif
