/* Shared by mdflush.bpf.c and the mdflush front end. */
#ifndef __MDFLUSH_H
#define __MDFLUSH_H

#include "task.h"

/* The kernel's DISK_NAME_LEN (include/linux/blkdev.h). */
#define MD_DISK_NAME_LEN 32

/* A flush sent to an md device: the task that sent it, the array. */
struct event {
	struct task_header task;
	/* The array's dev_t (block.h's encoding). */
	__u32 dev;
	__u32 pad;
	char disk[MD_DISK_NAME_LEN];
};

#endif
