/* Shared by cachetop.bpf.c and the cachetop front end. */
#ifndef __CACHETOP_H
#define __CACHETOP_H

#include "pagecache.h"
#include "task.h"

/* A process's row: the page cache work done in its context. */
struct proc_key {
	__u32 pid;
	__u32 uid;
};

struct proc_counts {
	/* The process's cgroup, as first seen this interval (--containers). */
	__u64 cgroup_id;
	/* enum cache_counter's counters. */
	__u64 counts[CNT_MAX];
	/* The process's name: its main thread's comm, as last seen. */
	char comm[TASK_COMM_LEN];
};

#endif
