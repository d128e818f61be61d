/* Shared by offcputime.bpf.c and the offcputime front end. */
#ifndef __OFFCPUTIME_H
#define __OFFCPUTIME_H

#define TASK_COMM_LEN 16
/* The deepest stack --perf-max-stack-depth may ask for; the stack map's
 * value size is set to the asked depth before load. Kept in BTF. */
enum stack_limits {
	MAX_STACK_DEPTH = 127,
};

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

/* Indexes of the per-CPU error counters. */
enum oc_error {
	/* bpf_get_stackid failed: a hash collision, or the stack map is full. */
	ERR_STACK_COLLISION,
	ERR_STACK_FULL,
	/* A user task whose user stack could not be read. */
	ERR_USER_STACK_FAULT,
	ERR_STACK_OTHER,
	/* The aggregation map (`info`) was full. */
	ERR_INFO_FULL,
	ERR_MAX,
};

#endif
