/* Shared by offcputime.bpf.c and the offcputime front end. */
#ifndef __OFFCPUTIME_H
#define __OFFCPUTIME_H

#include "stacks.h"

/* Indexes of the per-CPU error counters: the stack kind's only
 * (stacks.h). */
enum oc_error {
	ERR_MAX = ERR_STACK_LAST,
};

#endif
