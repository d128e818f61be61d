/* Shared by tcpdrop.bpf.c and the tcpdrop front end. */
#ifndef __TCPDROP_H
#define __TCPDROP_H

#include "task.h"
#include "tcpsock.h"

#define DROP_STACK_DEPTH 32

/* One TCP segment the kernel dropped, as its headers say: saddr/sport are
 * the segment's source (for a received segment, the remote end). */
struct event {
	__u64 ts_ns;
	__u64 location;
	__u32 pid;
	/* The kernel's enum skb_drop_reason value; has_reason 0 before 5.17. */
	__u32 reason;
	/* The socket's TCP state where a socket is known, else 0. */
	__u32 state;
	__u8 has_reason;
	__u8 tcp_flags;
	__u16 stack_frames;
	struct flow flow;
	char comm[TASK_COMM_LEN];
	__u64 stack[DROP_STACK_DEPTH];
};

#endif
