/* Shared by fsdist.bpf.c and the fsdist front end. */
#ifndef __FSDIST_H
#define __FSDIST_H

#include "hist.h"

/* One histogram per operation (fileio.h's FOP_READ...) and, with
 * --per-container, per cgroup id (0 without). */
struct fsdist_key {
	__u32 op;
	__u32 pad;
	__u64 cgroup_id;
};

#endif
