/* Shared by swapin.bpf.c and the swapin front end. */
#ifndef __SWAPIN_H
#define __SWAPIN_H

#include "task.h"

/* Swap-ins are counted by process (its comm at the first), and with
 * --containers its cgroup. */
struct swapin_key {
	__u64 cgroup_id;
	__u32 pid;
	char comm[TASK_COMM_LEN];
};

#endif
