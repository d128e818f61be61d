/* Shared by funclatency.bpf.c and the funclatency front end. */
#ifndef __FUNCLATENCY_H
#define __FUNCLATENCY_H

#include "hist.h"

/* Nested calls timed per thread, at most (-l: fewer). */
#define MAX_DEPTH 16

/* A thread's calls in progress: their start times and probe indexes. */
struct call_stack {
	__u64 start[MAX_DEPTH];
	__u32 probe[MAX_DEPTH];
	__u32 depth;
};

/* Keyed by 0, or with -F the probe's index. */
struct fl_hist {
	struct hist hist;
};

enum fl_error {
	/* A return that was not the innermost call's (a longjmp, an
	 * exception, a return probe missed): the thread's calls dropped. */
	ERR_FL_UNMATCHED,
	/* The map of threads' calls was full: a call not timed. */
	ERR_FL_THREADS_FULL,
	ERR_MAX,
};

#endif
