/* Shared by killsnoop.bpf.c and the killsnoop front end. */
#ifndef __KILLSNOOP_H
#define __KILLSNOOP_H

#include "task.h"

/* Where a signal was seen. */
enum signal_source {
	/* signal:signal_generate: any signal made, by a process or the kernel. */
	SOURCE_GENERATED = 0,
	SOURCE_KILL = 1,
	SOURCE_TKILL = 2,
	SOURCE_TGKILL = 3,
};

/* One signal sent: by the task in the header, to `tpid`. */
struct event {
	struct task_header task;
	/* The target: a thread id from signal_generate; the pid argument (a
	 * negative process group, -1 for all) from kill(), the thread id
	 * from tkill() and tgkill(). */
	__s32 tpid;
	__s32 sig;
	/* signal_generate's result (0 delivered, 1 ignored, 2 already
	 * pending, 3 queue overflow, 4 information lost); the system call's
	 * return (0, or -errno). */
	__s32 result;
	__u32 source;
	/* The target's command (signal_generate only). */
	char tcomm[TASK_COMM_LEN];
};

#endif
