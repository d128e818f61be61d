/* Shared by tcpaccept.bpf.c and the tcpaccept front end. */
#ifndef __TCPACCEPT_H
#define __TCPACCEPT_H

#include "task.h"
#include "tcpsock.h"

/* One accepted connection: the accepting task, the new socket's ends. */
struct event {
	struct task_header task;
	struct flow flow;
};

#endif
