/* Shared by softirqslower.bpf.c and the softirqslower front end. */
#ifndef __SOFTIRQSLOWER_H
#define __SOFTIRQSLOWER_H

#include "task.h"

/* Which delay: from the softirq's raise (by a hard interrupt, or code
 * that deferred work) to its handler's start, or the handler's run. */
enum softirq_stage {
	STAGE_RAISE_TO_ENTRY,
	STAGE_RUNTIME,
};

/* One slow softirq, on the CPU it ran on, in whatever task it
 * interrupted (or ksoftirqd). */
struct event {
	struct task_header task;
	__u64 delta_ns;
	__u32 stage;
	__u32 vec;
	__u32 cpu;
	__u32 pad;
};

#endif
