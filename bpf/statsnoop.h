/* Shared by statsnoop.bpf.c and the statsnoop front end. */
#ifndef __STATSNOOP_H
#define __STATSNOOP_H

#include "task.h"
#define PATH_MAX 4096

/* Which call. */
enum stat_call {
	CALL_STAT = 0,
	CALL_LSTAT = 1,
	CALL_NEWFSTATAT = 2,
	CALL_STATX = 3,
	CALL_STATFS = 4,
};

/* One call, at its return; only offsetof(path) + size bytes are sent. */
struct event {
	struct task_header task;
	/* 0, or -errno. */
	__s32 ret;
	__u32 call;
	/* The directory a relative path is relative to (AT_FDCWD: the cwd),
	 * for newfstatat and statx. */
	__s32 dfd;
	__u32 size;
	char path[PATH_MAX];
};

#endif
