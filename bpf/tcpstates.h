/* Shared by tcpstates.bpf.c and the tcpstates front end. */
#ifndef __TCPSTATES_H
#define __TCPSTATES_H

#include "task.h"
#include "tcpsock.h"

/* One state change. task: the task that ran it (softirq changes run in
 * whatever task was interrupted, as BCC's C-PID says), ts_ns the change. */
struct event {
	struct task_header task;
	__u64 skaddr;
	/* Time spent in oldstate; 0 when this socket's previous change was
	 * not seen. */
	__u64 delta_ns;
	__u32 oldstate;
	__u32 newstate;
	struct flow flow;
};

#endif
