/* Shared by tcptop.bpf.c and the tcptop front end. */
#ifndef __TCPTOP_H
#define __TCPTOP_H

#include "task.h"
#include "tcpsock.h"

/* Indexes of the per-CPU error counters (errors.bpf.h). */
enum tcptop_error {
	/* Bytes not counted: the connection table was full. */
	ERR_CONNS_FULL,
	ERR_MAX,
};

/* A process's connection. */
struct conn_key {
	__u32 pid;
	__u32 pad;
	struct flow flow;
};

struct conn_bytes {
	__u64 sent;
	__u64 received;
	/* The process's cgroup when the entry was made (--containers). */
	__u64 cgroup_id;
	char comm[TASK_COMM_LEN];
};

#endif
