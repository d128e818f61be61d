/* --unwind dwarf's record as the front end reads it: kept in BTF by
 * bpf/common.bpf.c, so common::unwind decodes the generated type. */
#ifndef __USTACK_H
#define __USTACK_H

enum ustack_limits {
	/* The largest --stack-copy-size. */
	USTACK_MAX = 64 * 1024,
	USTACK_PAGE = 4096,
	/* The record kind (first field) of a stack copy. */
	USTACK_KIND = 1,
	/* A copy of a waker's stack (offwaketime, wakeuptime): `tid` is the
	 * thread it woke, whose later record uses it. */
	USTACK_WAKER_KIND = 3,
};

/* A stack copy's header; `len` bytes of stack from sp up follow it. */
struct ustack_header {
	__u32 kind;
	/* The thread whose later record uses this copy: its own, or (a
	 * waker's copy) the thread woken. */
	__u32 tid;
	__u32 tgid;
	/* Bytes of data: fewer than asked where a page was not readable. */
	__u32 len;
	__u64 seq;
	__u64 ip;
	__u64 sp;
	__u64 bp;
};

#endif
