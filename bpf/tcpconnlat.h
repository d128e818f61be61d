/* Shared by tcpconnlat.bpf.c and the tcpconnlat front end. */
#ifndef __TCPCONNLAT_H
#define __TCPCONNLAT_H

#include "task.h"
#include "tcpsock.h"

/* One active open that completed: from the SYN sent (connect()) to the
 * handshake's completion (SYN_SENT -> ESTABLISHED). pid/comm: the task
 * that called connect(). */
struct event {
	__u64 ts_ns;
	__u64 latency_ns;
	__u32 pid;
	__u32 pad;
	struct flow flow;
	char comm[TASK_COMM_LEN];
};

#endif
