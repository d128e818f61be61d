/* Shared by memleak.bpf.c and the memleak front end. */
#ifndef __MEMLEAK_H
#define __MEMLEAK_H

#include "stacks.h"

/* Outstanding allocations are kept by process and address: with several
 * processes traced, one address can be live in each. */
struct alloc_key {
	__u64 addr;
	__u32 tgid;
	__u32 pad;
};

/* One outstanding allocation. */
struct alloc_info {
	__u64 size;
	__u64 ts_ns;
	__s32 stack_id;
	__u32 tgid;
	/* --unwind dwarf: the number of the stack copy sent at the call's
	 * entry (ustack.bpf.h; 0: none sent); stack_id is then -1. */
	__u64 seq;
};

/* Stacks are per process: the same addresses mean different code in two. */
struct combined_key {
	__s32 stack_id;
	__u32 tgid;
};

/* Outstanding bytes and allocations per stack (-C). */
struct combined {
	__u64 bytes;
	__u64 count;
};

/* -t: one allocator call. */
struct mem_event {
	__u64 ts_ns;
	__u64 addr;
	__u64 size;
	__u32 pid;
	__u32 tid;
	/* 1 allocation, 0 free. */
	__u8 alloc;
	__u8 pad[7];
};

/* The allocator's functions: the BPF cookie of a uprobe_multi probe, so
 * that one program serves them all. Kept in BTF. */
enum alloc_fn {
	FN_MALLOC,
	FN_CALLOC,
	FN_REALLOC,
	FN_REALLOCARRAY,
	FN_POSIX_MEMALIGN,
	FN_ALIGNED_ALLOC,
	FN_VALLOC,
	FN_MEMALIGN,
	FN_PVALLOC,
	FN_MMAP,
	FN_MREMAP,
	FN_MUNMAP,
	FN_FREE,
};

/* Indexes of the per-CPU error counters, after the stack map's. */
enum memleak_error {
	/* The outstanding-allocations map was full. */
	ERR_ALLOCS_FULL = ERR_STACK_LAST,
	ERR_COMBINED_FULL,
	ERR_MAX,
};

#endif
