/* Shared by wqlat.bpf.c and the wqlat front end. */
#ifndef __WQLAT_H
#define __WQLAT_H

#include "hist.h"

/* The kernel's WQ_NAME_LEN: 24 before Linux 6.8, 32 since (a read stops at
 * the name's NUL). */
#define WQ_NAME_MAX 32

/* What the latencies are added up by: the workqueue's name (-W) and the
 * work's function (-F); zeroed where not asked for. */
struct wq_key {
	char name[WQ_NAME_MAX];
	__u64 function;
};

#endif
