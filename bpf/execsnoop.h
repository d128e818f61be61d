/* Shared by execsnoop.bpf.c and the execsnoop front end. */
#ifndef __EXECSNOOP_H
#define __EXECSNOOP_H

#include "task.h"
/* Kept in BTF (execsnoop.bpf.c): the front end bounds --max-args by it. */
enum execsnoop_limits {
	ARGSIZE = 128,
	TOTAL_MAX_ARGS = 60,
	DEFAULT_MAX_ARGS = 20,
	FULL_MAX_ARGS_ARR = TOTAL_MAX_ARGS * ARGSIZE,
	LAST_ARG = FULL_MAX_ARGS_ARR - ARGSIZE,
};

/* Only the used part of args[] crosses into user space: args_size bytes of
 * NUL-terminated strings (the front end applies --max-args). */
struct event {
	/* At the exec's return: the new image's comm. */
	struct task_header task;
	__u32 ppid;
	__u32 uid;
	__u32 cpu;
	__s32 retval;
	__u32 args_size;
	/* An argument was cut at ARGSIZE, or more arguments followed max_args. */
	__u8 truncated;
	__u8 pad[3];
	char pcomm[TASK_COMM_LEN];
	char args[FULL_MAX_ARGS_ARR];
};

#endif
