/* Histogram values shared by the kernel side and common::output::hist. */
#ifndef __HIST_H
#define __HIST_H

/* Kept in BTF (common.bpf.c) for common::output::hist's generated types. Values
 * below 2^48 get their own fine slot; larger ones share the last. */
enum hist_layout {
	MAX_SLOTS = 32,
	FINE_SUB_BITS = 4,
	FINE_SUBS = 1 << FINE_SUB_BITS,
	FINE_SLOTS = (48 - FINE_SUB_BITS + 1) * FINE_SUBS,
};

struct hist {
	__u32 slots[MAX_SLOTS];
	__u64 count;
	__u64 total;
};

struct fine_hist {
	__u32 slots[FINE_SLOTS];
};

#endif
