/* Shared by tcptracer.bpf.c and the tcptracer front end. */
#ifndef __TCPTRACER_H
#define __TCPTRACER_H

#include "task.h"
#include "tcpsock.h"

/* What happened to the connection (BCC's C, A and X). */
enum tcp_event_type {
	TCP_EVENT_CONNECT = 1,
	TCP_EVENT_ACCEPT = 2,
	TCP_EVENT_CLOSE = 3,
};

/* One event of a TCP connection: its process and its ends. */
struct event {
	struct task_header task;
	struct flow flow;
	/* The socket's network namespace (its inode number). */
	__u32 netns;
	__u32 uid;
	/* enum tcp_event_type. */
	__u8 kind;
	/* A close seen in softirq (a reset received): the process is the
	 * connection's owner, as its connect or accept named it. */
	__u8 by_owner;
	__u8 pad[2];
};

/* A connection's owner: the task of its connect or accept. */
struct owner {
	struct task_header task;
	__u32 uid;
	__u32 pad;
};

#endif
