/* Shared by llcstat.bpf.c and the llcstat front end. */
#ifndef __LLCSTAT_H
#define __LLCSTAT_H

#include "task.h"

/* Counts by process (and thread with -t) and CPU, with the name of the
 * thread first sampled. */
struct llc_key {
	__u64 cgroup_id;
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	char comm[TASK_COMM_LEN];
};

struct llc_counts {
	__u64 references;
	__u64 misses;
};

#endif
