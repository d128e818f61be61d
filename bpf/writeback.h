/* Shared by writeback.bpf.c and the writeback front end. */
#ifndef __WRITEBACK_H
#define __WRITEBACK_H

#include "task.h"

#define DEVICE_LEN 32

/* One round of the kernel's writeback (wb_writeback()'s loop, from
 * writeback_start to writeback_written). The header is the worker that
 * wrote (a flusher kworker), but its cgroup_id is the cgroup whose dirty
 * pages were written (cgroup writeback: the bdi_writeback's memory
 * cgroup; the root's for the rest). */
struct event {
	struct task_header task;
	__u64 latency_ns;
	/* Pages written in the round: the work's budget at its start less
	 * what is left of it at its end. */
	__s64 pages;
	/* enum wb_reason. */
	__u32 reason;
	/* enum writeback_sync_modes: WB_SYNC_ALL (1) waits on every page. */
	__u32 sync_mode;
	/* The backing device's name: MAJ:MIN. */
	char device[DEVICE_LEN];
};

#endif
