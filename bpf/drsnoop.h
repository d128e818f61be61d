/* Shared by drsnoop.bpf.c and the drsnoop front end. */
#ifndef __DRSNOOP_H
#define __DRSNOOP_H

#include "task.h"

/* Which reclaim: the page allocator's (free memory short) or a memory
 * cgroup's (the cgroup at its memory.high or memory.max). */
enum reclaim_kind {
	RECLAIM_DIRECT,
	RECLAIM_MEMCG,
};

/* One reclaim, at its end, in the task that ran it. */
struct event {
	struct task_header task;
	__u64 latency_ns;
	/* Pages reclaimed. */
	__u64 nr_reclaimed;
	/* The allocation's gfp flags and order that asked for it. */
	__u64 gfp_flags;
	__s32 order;
	__u32 kind;
	__u32 uid;
	__u32 pad;
};

#endif
