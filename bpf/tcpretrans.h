/* Shared by tcpretrans.bpf.c and the tcpretrans front end. */
#ifndef __TCPRETRANS_H
#define __TCPRETRANS_H

#include "task.h"
#include "tcpsock.h"

/* Indexes of the per-CPU error counters (errors.bpf.h). */
enum tcpretrans_error {
	/* -c could not count a retransmit: the flow table was full. */
	ERR_FLOWS_FULL,
	ERR_MAX,
};

enum retrans_kind {
	KIND_RETRANS = 1,
	KIND_LOSS_PROBE = 2,
	KIND_SYNACK = 3,
};

/* `task` is the socket's owner where known (owner_known), else the task
 * the retransmit ran in, usually none (softirq, timer); its ts_ns the
 * retransmit. */
struct event {
	struct task_header task;
	__u32 seq;
	__u32 state;
	__u8 kind;
	__u8 owner_known;
	__u8 pad[6];
	struct flow flow;
};

#endif
