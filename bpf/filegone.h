/* Shared by filegone.bpf.c and the filegone front end. */
#ifndef __FILEGONE_H
#define __FILEGONE_H

#include "task.h"
#include "paths.h"

/* Which call. */
enum gone_call {
	GONE_UNLINK = 0,
	GONE_UNLINKAT = 1,
	GONE_RMDIR = 2,
	GONE_RENAME = 3,
	GONE_RENAMEAT = 4,
	GONE_RENAMEAT2 = 5,
	GONE_CALLS = 6,
};

/* The record's buffer: the paths as passed (len[0] and len[1] bytes, each
 * NUL-terminated; a delete has one), then for each relative one the names
 * of its base directory up to the root (depth[i] names, paths.bpf.h). */
#define GONE_BUF_SIZE (2 * PATH_MAX + WALK_BUF_SIZE)

/* One successful call, at its return; only offsetof(buf) + size bytes
 * are sent. */
struct event {
	struct task_header task;
	/* The directory each path is relative to (AT_FDCWD: the cwd). */
	__s32 dfd[2];
	/* unlinkat's (AT_REMOVEDIR) or renameat2's (RENAME_NOREPLACE,
	 * RENAME_EXCHANGE, RENAME_WHITEOUT) flags. */
	__u32 flags;
	__u32 call;
	__u32 size;
	__u16 len[2];
	__u16 depth[2];
	__u8 truncated[2];
	/* Bit i: path i's base directory was walked (a relative second path
	 * in the first's directory shares its walk). */
	__u8 walked;
	__u8 pad;
	char buf[GONE_BUF_SIZE];
};

#endif
