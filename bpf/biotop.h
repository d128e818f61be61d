/* Shared by biotop.bpf.c and the biotop front end. */
#ifndef __BIOTOP_H
#define __BIOTOP_H

#include "task.h"

/* I/O per submitting process, disk and op. */
struct who_key {
	__u32 pid;
	__u32 dev;
	__u32 op;
	__u32 pad;
	char comm[TASK_COMM_LEN];
};

struct io_total {
	/* The submitter's cgroup, as last seen (--containers). */
	__u64 cgroup_id;
	__u64 bytes;
	/* Issue to completion, summed. */
	__u64 latency_ns;
	__u64 ios;
};

#endif
