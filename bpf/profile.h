/* Shared by profile.bpf.c and the profile front end. */
#ifndef __PROFILE_H
#define __PROFILE_H

#include "stacks.h"

/* Indexes of the per-CPU error counters: the stack kind's only
 * (stacks.h). */
enum pr_error {
	ERR_MAX = ERR_STACK_LAST,
};

#endif
