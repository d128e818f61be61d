/* Shared by tcpstates.bpf.c and the tcpstates front end. */
#ifndef __TCPSTATES_H
#define __TCPSTATES_H

#include "task.h"
#include "tcpsock.h"

/* One state change. pid/comm: the task that ran it (softirq changes run
 * in whatever task was interrupted, as BCC's C-PID says). */
struct event {
	__u64 skaddr;
	__u64 ts_ns;
	/* Time spent in oldstate; 0 when this socket's previous change was
	 * not seen. */
	__u64 delta_ns;
	__u32 pid;
	__u32 oldstate;
	__u32 newstate;
	__u32 pad;
	struct flow flow;
	char comm[TASK_COMM_LEN];
};

#endif
