/* Shared by wakeuptime.bpf.c and the wakeuptime front end. */
#ifndef __WAKEUPTIME_H
#define __WAKEUPTIME_H

#include "stacks.h"

/* Indexes of the per-CPU error counters: the stack kind's only
 * (stacks.h). */
enum wu_error {
	ERR_MAX = ERR_STACK_LAST,
};

#endif
