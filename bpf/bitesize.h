/* Shared by bitesize.bpf.c and the bitesize front end. */
#ifndef __BITESIZE_H
#define __BITESIZE_H

#include "task.h"

/* One histogram per submitting process name, or (--per-container) per
 * the submitter's cgroup, comm then empty. */
struct size_key {
	char comm[TASK_COMM_LEN];
	__u64 cgroup_id;
};

#endif
