/* Shared by opensnoop.bpf.c and the opensnoop front end. */
#ifndef __OPENSNOOP_H
#define __OPENSNOOP_H

#include "task.h"
#include "paths.h"

/* buf holds the path as passed (NUL-terminated), then, with -F and a
 * relative path, dir_depth directory names from the base directory up to
 * the root, each NUL-terminated. Only offsetof(buf) + size bytes are sent. */
struct event {
	/* At the open's return. */
	struct task_header task;
	__u32 uid;
	__s32 ret;
	__s32 flags;
	__u32 mode;
	__u32 size;
	/* The directory a relative path is relative to (AT_FDCWD: the cwd). */
	__s32 dfd;
	__u16 dir_depth;
	/* The walk to the root stopped early (too deep, or out of room). */
	__u8 dir_truncated;
	__u8 pad[5];
	char buf[WALK_BUF_SIZE];
};

#endif
