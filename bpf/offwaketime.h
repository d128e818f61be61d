/* Shared by offwaketime.bpf.c and the offwaketime front end. */
#ifndef __OFFWAKETIME_H
#define __OFFWAKETIME_H

#include "stacks.h"

/* Indexes of the per-CPU error counters: the stack kind's only
 * (stacks.h). */
enum ow_error {
	ERR_MAX = ERR_STACK_LAST,
};

#endif
