/* The slow file I/O tools' record (fileslower; fsslower to come), shared
 * with their front ends. */
#ifndef __SLOWIO_H
#define __SLOWIO_H

#include "task.h"

#define SLOWIO_NAME_LEN 64

struct slow_event {
	/* Completion (ktime). */
	__u64 ts_ns;
	__u64 latency_ns;
	/* Bytes done, or the error (negative). */
	__s64 ret;
	/* The file position the call started at. */
	__u64 offset;
	__u32 pid;
	__u32 tid;
	/* fileio.h's kind: FOP_READ, FOP_WRITE... */
	__u32 op;
	/* 'R' regular, 'S' socket, 'O' other. */
	char type;
	char pad[3];
	char comm[TASK_COMM_LEN];
	char name[SLOWIO_NAME_LEN];
};

#endif
