/* Shared by futexctn.bpf.c and the futexctn front end. */
#ifndef __FUTEXCTN_H
#define __FUTEXCTN_H

#include "hist.h"
#include "stacks.h"

/* The waiting system calls, in the front end's order (CALL_SET). */
enum futex_call {
	FUTEX_CALL_FUTEX,
	/* futex2's futex_wait (Linux 6.7). */
	FUTEX_CALL_WAIT,
	/* futex_waitv (Linux 5.16): the futex woken is the one counted. */
	FUTEX_CALL_WAITV,
	FUTEX_CALLS,
};

/* What the waits are added up by: the process, the futex's address in it,
 * the user stack of the wait (-1 with -s, which keys by lock alone), and
 * with --per-container the task's cgroup. */
struct futexctn_key {
	__u64 uaddr;
	__u64 cgroup_id;
	__u32 tgid;
	__s32 stack_id;
};

/* The waits of one key, in the histogram's unit (µs, or ms with -m): the
 * log2 histogram, their count and sum, the shortest and the longest, and
 * the comm of the process's first wait. */
struct futexctn_hist {
	struct hist hist;
	__u64 min;
	__u64 max;
	char comm[TASK_COMM_LEN];
};

/* Indexes of the per-CPU error counters, after the stack map's. */
enum futexctn_error {
	/* The histograms' map was full: a wait not counted. */
	ERR_HISTS_FULL = ERR_STACK_LAST,
	ERR_MAX,
};

#endif
