/* filelife's record, shared with its front end. */
#ifndef __FILELIFE_H
#define __FILELIFE_H

#include "task.h"

#define LIFE_NAME_LEN 256

struct life_event {
	/* The deletion (ktime). */
	__u64 ts_ns;
	/* From the creation. */
	__u64 age_ns;
	/* The deleting thread. */
	__u32 pid;
	__u32 tid;
	char comm[TASK_COMM_LEN];
	char name[LIFE_NAME_LEN];
};

#endif
