/* Shared by threadsnoop.bpf.c and the threadsnoop front end. */
#ifndef __THREADSNOOP_H
#define __THREADSNOOP_H

#include "task.h"

/* One new thread, as its creator made it: the header is the creator's. */
struct event {
	struct task_header task;
	/* The function the thread starts in (pthread_create's third
	 * argument), 0 where not known (no pthread_create: Go, a raw clone(),
	 * a libc not probed). */
	__u64 start;
	__u64 clone_flags;
	/* The new thread's id. */
	__u32 new_tid;
	__u32 pad;
};

#endif
