/* Shared by biolatency.bpf.c and the biolatency front end. */
#ifndef __BIOLATENCY_H
#define __BIOLATENCY_H

/* flags: the request's op (low byte: 0 Read, 1 Write, 2 Flush, 3 Discard,
 * ...) and these bits, in a layout of our own so that the front end does not
 * depend on the kernel's flag bit numbers, which move between versions.
 * Kept in BTF (biolatency.bpf.c) for the front end's generated types. */
enum bio_flag {
	BIO_SYNC = 1 << 8,
	BIO_META = 1 << 9,
	BIO_FUA = 1 << 10,
	BIO_PREFLUSH = 1 << 11,
	BIO_RAHEAD = 1 << 12,
	BIO_BACKGROUND = 1 << 13,
	BIO_NOWAIT = 1 << 14,
};

/* One histogram per key; dev (kernel dev_t of the disk) is 0 without -D,
 * flags 0 without -F, cgroup_id (the cgroup of the task that queued or
 * issued the request) 0 without --per-container. */
struct hist_key {
	__u32 dev;
	__u32 flags;
	__u64 cgroup_id;
};

#endif
