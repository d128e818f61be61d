/* Shared by stackcount.bpf.c and the stackcount front end. */
#ifndef __STACKCOUNT_H
#define __STACKCOUNT_H

#include "stacks.h"

/* Indexes of the per-CPU error counters: the stack kind's only
 * (stacks.h). */
enum sc_error {
	ERR_MAX = ERR_STACK_LAST,
};

#endif
