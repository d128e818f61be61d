/* Shared by biosnoop.bpf.c and the biosnoop front end. */
#ifndef __BIOSNOOP_H
#define __BIOSNOOP_H

#include "task.h"

/* -P: where a request starts relative to the last one completed on its
 * disk. Kept in BTF (biosnoop.bpf.c) for the front end. */
enum io_pattern {
	PATTERN_UNKNOWN = 0,
	PATTERN_SEQUENTIAL = 1,
	PATTERN_RANDOM = 2,
};

/* One completed request. */
struct event {
	/* The submitter; ts_ns is the completion (ktime). */
	struct task_header task;
	__u64 sector;
	/* Started to issued (0: issued without a queue); issued to done. */
	__u64 queue_ns;
	__u64 latency_ns;
	__u32 dev;
	__u32 bytes;
	__u32 op;
	__u32 pattern;
};

#endif
