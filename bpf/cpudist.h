/* Shared by cpudist.bpf.c and the cpudist front end. */
#ifndef __CPUDIST_H
#define __CPUDIST_H

#include "hist.h"
#include "task.h"

/* Keyed by 0, tgid (-P), tid (-L) or cgroup id (--per-container). */
struct cpu_hist {
	struct hist hist;
	char comm[TASK_COMM_LEN];
};

#endif
