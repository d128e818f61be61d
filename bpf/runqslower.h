/* Shared by runqslower.bpf.c and the runqslower front end. */
#ifndef __RUNQSLOWER_H
#define __RUNQSLOWER_H

#include "task.h"

/* A task that waited on a run queue longer than the threshold: the header
 * is that task's, at the moment it got the CPU. */
struct event {
	struct task_header task;
	__u64 latency_us;
	/* The task it took the CPU from (-P). */
	char prev_comm[TASK_COMM_LEN];
	__u32 prev_tid;
	__u32 cpu;
};

#endif
