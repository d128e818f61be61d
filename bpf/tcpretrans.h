/* Shared by tcpretrans.bpf.c and the tcpretrans front end. */
#ifndef __TCPRETRANS_H
#define __TCPRETRANS_H

#include "task.h"

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

/* Addresses in network byte order (IPv4 in the first 4 bytes), ports in
 * host order. `pid` is the socket's owner where known (owner_known), else
 * the task the retransmit ran in, usually none (softirq, timer). */
struct event {
	__u64 ts_ns;
	__u32 pid;
	__u32 seq;
	__u32 state;
	__u16 family;
	__u16 lport;
	__u16 dport;
	__u8 kind;
	__u8 owner_known;
	__u8 saddr[16];
	__u8 daddr[16];
	char comm[TASK_COMM_LEN];
};

struct flow_key {
	__u16 family;
	__u16 lport;
	__u16 dport;
	__u16 pad;
	__u8 saddr[16];
	__u8 daddr[16];
};

#endif
