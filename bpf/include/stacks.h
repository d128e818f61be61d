/* What every stack tool shares with its front end; kept in BTF by
 * bpf/common.bpf.c, so common::kinds::stack reads them as generated types. */
#ifndef __STACKS_H
#define __STACKS_H

#include "task.h"

enum stack_limits {
	/* The deepest stack --perf-max-stack-depth may ask for; the stack
	 * map's value size is set to the asked depth before load. */
	MAX_STACK_DEPTH = 127,
	/* The record kind of a struct stack_sample (after ustack.h's
	 * USTACK_KIND, the stack copy's). */
	STACK_SAMPLE_KIND = 2,
};

/* What a stack tool counts by (stackcounts.bpf.h's `counts`): a process,
 * the thread shown (0 where counted by process), its cgroup (--containers;
 * else 0), and its two stacks. A
 * stack id of -1: no such half (-U, -K, a kernel thread's user stack, a
 * sample taken in user mode's kernel stack); another negative id: the
 * stack map's failure (counted). */
struct stack_key {
	__u32 tgid;
	__u32 tid;
	__s32 user_stack_id;
	__s32 kern_stack_id;
	char comm[TASK_COMM_LEN];
	__u64 cgroup_id;
	/* At a user function's first instruction (stackcount): the return
	 * address on top of the stack, the immediate caller, which the frame
	 * pointer walk skips there (its frame is not pushed yet); else 0. */
	__u64 entry_caller;
	/* A tool's own part of the key: biostacks' disk (its dev_t, as
	 * block.h encodes it); else 0. */
	__u32 dev;
	__u32 pad;
};

/* --unwind dwarf: a count sent to the front end instead of added in the
 * kernel, after the user stack copy (ustack.h) whose number it carries:
 * 0 when no user stack was wanted, STACK_SEQ_LOST when the copy could not
 * be sent. */
#define STACK_SEQ_LOST ((__u64)-1)

/* offwaketime and wakeuptime: the task that woke the key's task (`comm`
 * empty: none seen), with its stacks, as in struct stack_key. */
struct stack_waker {
	__u32 tgid;
	__u32 tid;
	__s32 user_stack_id;
	__s32 kern_stack_id;
	char comm[TASK_COMM_LEN];
};

/* What the waker tools count by (stackcounts.bpf.h with STACK_WAKERS):
 * the woken task and its stacks (offwaketime; wakeuptime: none), and
 * its waker. */
struct wake_key {
	struct stack_key target;
	struct stack_waker waker;
};

struct stack_sample {
	__u32 kind;
	__u32 tgid;
	__u32 tid;
	__s32 kern_stack_id;
	__u64 seq;
	__u64 value;
	char comm[TASK_COMM_LEN];
	__u64 cgroup_id;
	/* The waker tools': the waker (user_stack_id unused) and its user
	 * stack copy's number, as `seq`. */
	struct stack_waker waker;
	__u64 waker_seq;
};

/* The first values of every stack tool's error enum (errors.bpf.h): what
 * bpf_get_stackid failed with. The tool's own errors follow from
 * ERR_STACK_LAST. */
enum stack_error {
	/* A hash collision: another stack holds the bucket. */
	ERR_STACK_COLLISION,
	/* The stack map is full. */
	ERR_STACK_FULL,
	/* A user stack could not be read (paged out, no frame pointers). */
	ERR_STACK_USER_FAULT,
	ERR_STACK_OTHER,
	/* The counts map (stackcounts.bpf.h) was full: a count not kept. */
	ERR_STACK_COUNTS_FULL,
	ERR_STACK_LAST,
};

#endif
