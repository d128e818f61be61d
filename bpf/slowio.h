/* The slow file I/O tools' record (fileslower, fsslower), shared with
 * their front ends. */
#ifndef __SLOWIO_H
#define __SLOWIO_H

#include "task.h"

#define SLOWIO_NAME_LEN 64

struct slow_event {
	/* The calling task; ts_ns the completion (ktime). */
	struct task_header task;
	__u64 latency_ns;
	/* Bytes done, or the error (negative). */
	__s64 ret;
	/* The file position the call started at. */
	__u64 offset;
	/* fileio.h's kind: FOP_READ, FOP_WRITE... */
	__u32 op;
	/* 'R' regular, 'S' socket, 'O' other. */
	char type;
	char pad[3];
	char name[SLOWIO_NAME_LEN];
};

#endif
