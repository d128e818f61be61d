/* Shared by tcppktlat.bpf.c and the tcppktlat front end. */
#ifndef __TCPPKTLAT_H
#define __TCPPKTLAT_H

#include "task.h"
#include "tcpsock.h"

/* One read of a TCP socket: the reader, the connection, and how long its
 * oldest unread data had waited. */
struct event {
	struct task_header task;
	struct flow flow;
	/* From the arrival of the first segment not read yet to the read. */
	__u64 wait_ns;
};

#endif
