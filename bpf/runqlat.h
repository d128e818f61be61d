/* Shared by runqlat.bpf.c and the runqlat front end. */
#ifndef __RUNQLAT_H
#define __RUNQLAT_H

#include "hist.h"

#include "task.h"

/* Keyed by 0, tgid (-P), tid (-L), pid namespace inode (--pidns) or cgroup
 * id (--per-container). */
struct rq_hist {
	struct hist hist;
	char comm[TASK_COMM_LEN];
};

#endif
