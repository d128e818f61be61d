/* Shared by exitsnoop.bpf.c and the exitsnoop front end. */
#ifndef __EXITSNOOP_H
#define __EXITSNOOP_H

#include "task.h"

/* One exit: of a process (its last thread), or with --per-thread of a
 * thread. */
struct event {
	struct task_header task;
	/* How long it lived: from the process's (thread's) start. */
	__u64 age_ns;
	/* The parent's process id. */
	__u32 ppid;
	/* The kernel's exit_code: status << 8 | core dumped 0x80 | signal. */
	__u32 exit_code;
};

#endif
