/* Shared by tcplife.bpf.c and the tcplife front end. */
#ifndef __TCPLIFE_H
#define __TCPLIFE_H

#include "task.h"
#include "tcpsock.h"

/* One closed session. task: the socket's owner, noted where the kernel
 * runs in its context (connect, close, shutdown), else the task the close
 * ran in (owner_known 0); its ts_ns the close. */
struct event {
	struct task_header task;
	/* From the socket's last opening state (SYN_SENT, SYN_RECV or
	 * ESTABLISHED: BCC's) to CLOSE. */
	__u64 span_ns;
	__u64 rx_bytes;
	__u64 tx_bytes;
	__u8 owner_known;
	/* 1: opened by connect() (SYN_SENT seen); 0: accepted. */
	__u8 active;
	__u8 pad[6];
	struct flow flow;
};

#endif
