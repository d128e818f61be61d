/* The stack tools' stack map and stack ids, with their failures counted
 * (errors.bpf.h, included first, with the tool's error enum starting at
 * stack.h's values). */
#ifndef __STACKS_BPF_H
#define __STACKS_BPF_H

#include "stacks.h"

#ifndef EEXIST
#define EEXIST 17
#endif
#ifndef ENOMEM
#define ENOMEM 12
#endif
#ifndef EFAULT
#define EFAULT 14
#endif

/* A stack map; its size and depth are set by the front end
 * (--stack-storage-size, --perf-max-stack-depth) before load. */
#define STACK_MAP(name)							\
	struct {							\
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);			\
		__uint(max_entries, 16384);				\
		__uint(key_size, sizeof(__u32));			\
		__uint(value_size, MAX_STACK_DEPTH * sizeof(__u64));	\
	} name SEC(".maps")

static __always_inline void count_stack_error(long err)
{
	count_error(err == -EEXIST ? ERR_STACK_COLLISION :
		    err == -ENOMEM ? ERR_STACK_FULL :
		    err == -EFAULT ? ERR_STACK_USER_FAULT : ERR_STACK_OTHER);
}

/* bpf_get_stackid, its failure counted by kind; the id, or negative. */
static __always_inline long stack_id(void *ctx, void *map, __u64 flags)
{
	long id = bpf_get_stackid(ctx, map, flags);

	if (id < 0)
		count_stack_error(id);
	return id;
}

/* As stack_id, for a half that may have no frames at all: a sample taken
 * in user mode has no kernel stack (-EFAULT), which is no failure: -1. */
static __always_inline long stack_id_or_none(void *ctx, void *map, __u64 flags)
{
	long id = bpf_get_stackid(ctx, map, flags);

	if (id == -EFAULT)
		return -1;
	if (id < 0)
		count_stack_error(id);
	return id;
}

#endif
