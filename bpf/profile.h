/* Shared by profile.bpf.c and the profile front end. */
#ifndef __PROFILE_H
#define __PROFILE_H

#include "task.h"
#include "stacks.h"

/* Samples are counted by this key. A stack id of -1: no such half (-U, -K,
 * a kernel thread's user stack, a sample taken in user mode's kernel
 * stack); another negative id: the stack map's error (counted). */
struct pr_key {
	__u32 pid;
	/* With -L only (per-thread counts); else 0. */
	__u32 tid;
	__s32 user_stack_id;
	__s32 kern_stack_id;
	char comm[TASK_COMM_LEN];
};

/* --unwind dwarf: one sample, sent after its user stack copy (ustack.h),
 * whose number it carries (0: no user stack wanted, PR_SEQ_LOST: the copy
 * could not be sent). */
enum pr_record_kind {
	PR_SAMPLE_KIND = 3,
};

#define PR_SEQ_LOST ((__u64)-1)

struct pr_sample {
	__u32 kind;
	__u32 pid;
	__u32 tid;
	__s32 kern_stack_id;
	__u64 seq;
	char comm[TASK_COMM_LEN];
};

/* Indexes of the per-CPU error counters, after the stack map's. */
enum pr_error {
	/* The counts map was full: samples not counted. */
	ERR_COUNTS_FULL = ERR_STACK_LAST,
	ERR_MAX,
};

#endif
