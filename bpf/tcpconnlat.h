/* Shared by tcpconnlat.bpf.c and the tcpconnlat front end. */
#ifndef __TCPCONNLAT_H
#define __TCPCONNLAT_H

#include "task.h"
#include "tcpsock.h"

/* One active open that completed: from the SYN sent (connect()) to the
 * handshake's completion (SYN_SENT -> ESTABLISHED). task: the task that
 * called connect(), its ts_ns the completion. */
struct event {
	struct task_header task;
	__u64 latency_ns;
	struct flow flow;
};

#endif
