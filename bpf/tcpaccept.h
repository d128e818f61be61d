/* Shared by tcpaccept.bpf.c and the tcpaccept front end. */
#ifndef __TCPACCEPT_H
#define __TCPACCEPT_H

#include "task.h"
#include "tcpsock.h"

/* One accepted connection: the accepting task, the new socket's ends. */
struct event {
	__u64 ts_ns;
	__u32 pid;
	__u32 tid;
	struct flow flow;
	char comm[TASK_COMM_LEN];
};

#endif
