/* filelife's record, shared with its front end. */
#ifndef __FILELIFE_H
#define __FILELIFE_H

#include "task.h"

#define LIFE_NAME_LEN 256

struct life_event {
	/* The deleting thread; ts_ns is the deletion (ktime). */
	struct task_header task;
	/* From the creation: its birth seen while tracing, or (the
	 * tracepoint mode) the inode's own creation time. */
	__u64 age_ns;
	char name[LIFE_NAME_LEN];
};

#endif
