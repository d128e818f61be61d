/* Shared by cpufreq.bpf.c and the cpufreq front end. */
#ifndef __CPUFREQ_H
#define __CPUFREQ_H

#include "task.h"

/* A histogram's key: the whole machine (all zero), or a process name
 * (by_comm) and with -P its pid; with --per-container its cgroup. */
struct freq_key {
	__u64 cgroup_id;
	__u32 pid;
	__u32 machine;
	char comm[TASK_COMM_LEN];
};

#endif
