/* Shared by dcsnoop.bpf.c and the dcsnoop front end. */
#ifndef __DCSNOOP_H
#define __DCSNOOP_H

#include "task.h"

/* The name looked up, from its component to the end of the path the
 * process gave (the kernel's qstr points into it): NAME_MAX and its NUL. */
#define DC_NAME_LEN 256

/* What a record is; kept in BTF (dcsnoop.bpf.c). */
enum dc_lookup {
	/* A slow lookup (d_lookup) that found nothing: BCC's M. */
	DC_MISS,
	/* A path component looked up in the cache (lookup_fast, -a): BCC's R. */
	DC_REFERENCE,
};

struct event {
	struct task_header task;
	__u32 type;
	__u32 pad;
	char name[DC_NAME_LEN];
};

#endif
