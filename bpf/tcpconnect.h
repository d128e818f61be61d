/* Shared by tcpconnect.bpf.c and the tcpconnect front end. */
#ifndef __TCPCONNECT_H
#define __TCPCONNECT_H

#include "task.h"
#include "tcpsock.h"

/* Indexes of the per-CPU error counters (errors.bpf.h). */
enum tcpconnect_error {
	/* -c could not count a connect: the table was full. */
	ERR_COUNTS_FULL,
	ERR_MAX,
};

/* One connect: the calling task, and the socket's endpoints. */
struct event {
	struct task_header task;
	__u32 uid;
	__u32 pad;
	struct flow flow;
};

/* -c's key: the local and remote address, and the remote port. */
struct count_key {
	__u16 family;
	__u16 dport;
	__u32 pad;
	__u8 saddr[16];
	__u8 daddr[16];
};

#endif
