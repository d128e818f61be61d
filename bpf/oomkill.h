/* Shared by oomkill.bpf.c and the oomkill front end. */
#ifndef __OOMKILL_H
#define __OOMKILL_H

#include "task.h"

/* One OOM kill: the task that ran the OOM killer (the header), and its
 * victim. What the kernel tells depends on the hook: the OOM killer's
 * function gives the size of the memory the kill was for (BCC's pages);
 * the mark_victim tracepoint the victim's sizes (6.2+: its VM and
 * resident sizes in kB; before: its pid only). */
struct event {
	struct task_header task;
	__u32 victim_pid;
	/* The fields the hook gave: FROM_FUNCTION, FROM_SIZES. */
	__u32 known;
	/* oom_control's totalpages: the pages of the memory the kill was
	 * for (the machine's, or the memory cgroup's limit). */
	__u64 total_pages;
	/* The victim's sizes, in kB. */
	__u64 total_vm_kb;
	__u64 anon_rss_kb;
	__u64 file_rss_kb;
	__u64 shmem_rss_kb;
	char victim_comm[TASK_COMM_LEN];
};

#define FROM_FUNCTION 1
#define FROM_SIZES 2
#define FROM_COMM 4

#endif
