/* Shared by offcputime.bpf.c and the offcputime front end. */
#ifndef __OFFCPUTIME_H
#define __OFFCPUTIME_H

#include "task.h"
#include "stacks.h"

struct oc_key {
	__u32 tid;
	__u32 tgid;
	__s32 user_stack_id;
	__s32 kern_stack_id;
	char comm[TASK_COMM_LEN];
};

/* --unwind dwarf: the time of one off-CPU interval, sent when the thread
 * runs again, for the user stack copy (ustack.bpf.h) sent when it left. */
enum oc_record_kind {
	OC_DELTA_KIND = 2,
};

/* seq: the copy's number; 0 when no user stack was wanted (a kernel
 * thread, -K), OC_SEQ_LOST when the copy could not be sent. */
#define OC_SEQ_LOST ((__u64)-1)

struct oc_delta {
	__u32 kind;
	__u32 tid;
	__u32 tgid;
	__s32 kern_stack_id;
	__u64 seq;
	__u64 delta_ns;
	char comm[TASK_COMM_LEN];
};

/* Indexes of the per-CPU error counters, after the stack map's. */
enum oc_error {
	/* The aggregation map (`info`) was full. */
	ERR_INFO_FULL = ERR_STACK_LAST,
	ERR_MAX,
};

#endif
