/* Shared by biostacks.bpf.c and the biostacks front end. */
#ifndef __BIOSTACKS_H
#define __BIOSTACKS_H

#include "stacks.h"

/* Indexes of the per-CPU error counters: the stack kind's only
 * (stacks.h). */
enum bs_error {
	ERR_MAX = ERR_STACK_LAST,
};

#endif
