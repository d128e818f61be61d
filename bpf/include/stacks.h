/* What every stack tool shares with its front end; kept in BTF by
 * bpf/common.bpf.c, so common::stacks reads them as generated types. */
#ifndef __STACKS_H
#define __STACKS_H

/* The deepest stack --perf-max-stack-depth may ask for; the stack map's
 * value size is set to the asked depth before load. */
enum stack_limits {
	MAX_STACK_DEPTH = 127,
};

/* The first values of every stack tool's error enum (errors.bpf.h): what
 * bpf_get_stackid failed with. The tool's own errors follow from
 * ERR_STACK_LAST. */
enum stack_error {
	/* A hash collision: another stack holds the bucket. */
	ERR_STACK_COLLISION,
	/* The stack map is full. */
	ERR_STACK_FULL,
	/* A user stack could not be read (paged out, no frame pointers). */
	ERR_STACK_USER_FAULT,
	ERR_STACK_OTHER,
	ERR_STACK_LAST,
};

#endif
