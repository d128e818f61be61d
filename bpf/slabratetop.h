/* Shared by slabratetop.bpf.c and the slabratetop front end. */
#ifndef __SLABRATETOP_H
#define __SLABRATETOP_H

#define SLAB_NAME_MAX 32

/* What allocations are added up by: the slab cache (its kmem_cache, Linux
 * 6.1+'s tracepoint or a probe on kmem_cache_alloc), or where neither is
 * there the call site; with --containers the allocating task's cgroup. */
struct slab_key {
	__u64 cache;
	__u64 call_site;
	__u64 cgroup_id;
};

struct slab_total {
	__u64 count;
	__u64 bytes;
	/* The cache's name, read at its first allocation. */
	char name[SLAB_NAME_MAX];
};

#endif
