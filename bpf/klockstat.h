/* Shared by klockstat.bpf.c and the klockstat front end. */
#ifndef __KLOCKSTAT_H
#define __KLOCKSTAT_H

#include "stacks.h"

/* The lock:contention_begin tracepoint's flags (include/trace/events/
 * lock.h), which klockstat's kprobes set too: what kind of lock. */
enum lock_flags {
	LOCK_SPIN = 1 << 0,
	LOCK_READ = 1 << 1,
	LOCK_WRITE = 1 << 2,
	LOCK_RT = 1 << 3,
	LOCK_PERCPU = 1 << 4,
	LOCK_MUTEX = 1 << 5,
};

/* What the waits and holds are added up by: the kernel stack where the
 * lock was asked for (-1 with --per-thread, which keys by thread), the
 * lock's kind, and with --containers the task's cgroup. */
struct lock_key {
	__s32 stack_id;
	/* --per-thread: the thread; else 0. */
	__u32 tid;
	__u32 flags;
	__u32 pad;
	/* --containers: the waiting (holding) task's cgroup v2 id; else 0. */
	__u64 cgroup_id;
};

/* The waits (or holds) of one key: how many, their sum, the longest and
 * who waited (or held) it, on which lock. */
struct lock_stat {
	__u64 count;
	__u64 total_ns;
	__u64 max_ns;
	__u64 max_lock;
	__u32 max_pid;
	__u32 max_tid;
	char max_comm[TASK_COMM_LEN];
};

/* Indexes of the per-CPU error counters, after the stack map's. */
enum klockstat_error {
	/* The waits or holds map was full: a wait or hold not counted. */
	ERR_STATS_FULL = ERR_STACK_LAST,
	/* A contention, a lock call or a held lock could not be tracked. */
	ERR_TRACKING_FULL,
	/* An unlock whose lock call was not seen: taken before tracing, or
	 * its return missed (the kretprobe's instances all in use). */
	ERR_UNMATCHED_UNLOCK,
	ERR_MAX,
};

#endif
