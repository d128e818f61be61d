/* Shared by tcpdrop.bpf.c and the tcpdrop front end. */
#ifndef __TCPDROP_H
#define __TCPDROP_H

#include "task.h"
#include "tcpsock.h"

#define DROP_STACK_DEPTH 32

/* One TCP segment the kernel dropped, as its headers say: saddr/sport are
 * the segment's source (for a received segment, the remote end). */
struct event {
	/* The task current at the drop (softirq: whichever it interrupted). */
	struct task_header task;
	__u64 location;
	/* The kernel's enum skb_drop_reason value; has_reason 0 before 5.17. */
	__u32 reason;
	/* The socket's TCP state where a socket is known, else 0. */
	__u32 state;
	__u8 has_reason;
	__u8 tcp_flags;
	__u16 stack_frames;
	struct flow flow;
	__u32 pad;
	__u64 stack[DROP_STACK_DEPTH];
};

#endif
