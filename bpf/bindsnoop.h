/* Shared by bindsnoop.bpf.c and the bindsnoop front end. */
#ifndef __BINDSNOOP_H
#define __BINDSNOOP_H

#include "task.h"

/* One bind() of an IPv4 or IPv6 socket, at its return. */
struct event {
	struct task_header task;
	/* Bound to (a success: the socket's own, the port the kernel picked
	 * where 0 was asked) or asked for (a failure); network order, IPv4 in
	 * the first 4 bytes. */
	__u8 addr[16];
	__u64 latency_ns;
	/* The socket's network namespace (its inode number). */
	__u32 netns;
	/* SO_BINDTODEVICE's interface index; 0: none. */
	__u32 bound_dev_if;
	__s32 ret;
	__u32 uid;
	__u16 family;
	/* Host order. */
	__u16 port;
	/* IPPROTO_TCP, IPPROTO_UDP, ... */
	__u16 protocol;
	/* BIND_OPT_* (sockets.bpf.h): FREEBIND 1, TRANSPARENT 2, NO_PORT 4,
	 * REUSEADDR 8, REUSEPORT 16. */
	__u8 opts;
	__u8 pad;
};

/* --count: binds per local address and port (BCC's). */
struct count_key {
	__u8 addr[16];
	__u16 family;
	__u16 port;
	__u32 pad;
};

/* Indexes of the per-CPU error counters (errors.bpf.h). */
enum bindsnoop_error {
	/* --count could not count a bind: the table was full. */
	ERR_COUNTS_FULL,
	ERR_MAX,
};

#endif
