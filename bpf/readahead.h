/* Shared by readahead.bpf.c and the readahead front end. */
#ifndef __READAHEAD_H
#define __READAHEAD_H

#include "hist.h"

/* The one histogram (key 0): the age of read-ahead pages at their first
 * use, one count per page. */
struct ra_hist {
	struct hist hist;
};

/* The pages' counters (array `counts`, key 0), drained with the histogram. */
struct ra_counts {
	/* Pages allocated by read-ahead. */
	__u64 total;
	/* Of those, not used yet (allocated minus used). */
	__s64 unused;
	/* Allocations not followed: the table of pages waiting for their use
	 * was full. */
	__u64 dropped;
};

#endif
