/* Shared by syncsnoop.bpf.c and the syncsnoop front end. */
#ifndef __SYNCSNOOP_H
#define __SYNCSNOOP_H

#include "task.h"
#include "paths.h"

/* Which call. */
enum sync_call {
	SYNC_SYNC = 0,
	SYNC_SYNCFS = 1,
	SYNC_FSYNC = 2,
	SYNC_FDATASYNC = 3,
	SYNC_MSYNC = 4,
	SYNC_FILE_RANGE = 5,
	SYNC_CALLS = 6,
};

/* One call, at its return; only offsetof(buf) + size bytes are sent. */
struct event {
	struct task_header task;
	__u64 latency_ns;
	/* The call's first three arguments (fd or address, then offset and
	 * length, or length and flags). */
	__u64 args[3];
	/* 0, or -errno. */
	__s32 ret;
	__u32 call;
	__u32 size;
	/* buf holds `depth` names of the file's path, its own first
	 * (paths.bpf.h); none where the call names no file. */
	__u16 depth;
	__u8 truncated;
	__u8 has_file;
	char buf[WALK_BUF_SIZE];
};

#endif
