/* Shared by shmsnoop.bpf.c and the shmsnoop front end. */
#ifndef __SHMSNOOP_H
#define __SHMSNOOP_H

#include "task.h"

/* Which call. */
enum shm_call {
	SHM_GET = 0,
	SHM_AT = 1,
	SHM_DT = 2,
	SHM_CTL = 3,
	SHM_CALLS = 4,
};

/* One call, at its return. */
struct event {
	struct task_header task;
	__u64 latency_ns;
	/* The call's arguments: shmget's key, size and flags; shmat's id,
	 * address and flags; shmdt's address; shmctl's id, command and
	 * buffer. */
	__u64 args[3];
	/* The result: an id, an address (shmat), 0, or -errno. */
	__s64 ret;
	__u32 call;
	__u32 pad;
};

#endif
