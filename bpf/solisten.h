/* Shared by solisten.bpf.c and the solisten front end. */
#ifndef __SOLISTEN_H
#define __SOLISTEN_H

#include "task.h"

/* One listen() of an IPv4 or IPv6 socket, at its return. */
struct event {
	struct task_header task;
	/* Where the socket listens: network order, IPv4 in the first 4 bytes. */
	__u8 addr[16];
	__u64 latency_ns;
	/* The socket's network namespace (its inode number). */
	__u32 netns;
	__s32 ret;
	/* The backlog in force (a success: the asked one as the kernel
	 * capped it at net.core.somaxconn), else the one asked for. */
	__u32 backlog;
	/* What listen() asked for. */
	__s32 asked;
	__u16 family;
	/* Host order: the port bound, or the one listen() picked. */
	__u16 port;
	/* IPPROTO_TCP, IPPROTO_SCTP, IPPROTO_MPTCP, ... */
	__u16 protocol;
	/* SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET, ... */
	__u16 sock_type;
};

#endif
