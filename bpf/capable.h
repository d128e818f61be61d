/* Shared by capable.bpf.c and the capable front end. */
#ifndef __CAPABLE_H
#define __CAPABLE_H

#include "task.h"

enum cap_limits {
	/* The deepest stack -K/-U take (--perf-max-stack-depth's limit). */
	CAP_STACK_DEPTH = 127,
};

/* What an event knows besides the check's capability and result. */
enum cap_flags {
	/* The hook saw the check's options (fexit, kprobe): AUDIT and INSETID
	 * below hold. The capability:cap_capable tracepoint does not pass them. */
	CAP_OPTS_KNOWN = 1,
	/* The check is audited (no CAP_OPT_NOAUDIT). */
	CAP_AUDITED = 2,
	/* A set-id check (CAP_OPT_INSETID: setuid(2) and its kin). */
	CAP_INSETID = 4,
};

/* One capability check, by the task in the header. */
struct event {
	struct task_header task;
	/* The checking task's real uid (BCC's). */
	__u32 uid;
	__s32 cap;
	/* 0 granted, else -EPERM. */
	__s32 ret;
	__u32 flags;
	/* Frames in each stack below: -K and -U only. */
	__u16 kstack_frames;
	__u16 ustack_frames;
	__u32 pad;
	__u64 kstack[CAP_STACK_DEPTH];
	__u64 ustack[CAP_STACK_DEPTH];
};

/* --unique: one line per capability and process, or per cgroup. */
enum cap_unique {
	UNIQUE_OFF = 0,
	UNIQUE_PID = 1,
	UNIQUE_CGROUP = 2,
};

struct unique_key {
	__u64 who;
	__s32 cap;
	__u32 pad;
};

#endif
