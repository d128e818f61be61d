/* Shared by tcpsynbl.bpf.c and the tcpsynbl front end. */
#ifndef __TCPSYNBL_H
#define __TCPSYNBL_H

/* Indexes of the per-CPU error counters (errors.bpf.h). */
enum tcpsynbl_error {
	/* A backlog limit had no histogram: the map was full. */
	ERR_HISTS_FULL,
	ERR_MAX,
};

/* One histogram per listen backlog limit (BCC's backlog_max); with
 * --per-port per listening port too, and with --per-container per the
 * listening socket's cgroup. */
struct backlog_key {
	__u32 backlog_max;
	__u16 port;
	__u16 pad;
	__u64 cgroup_id;
};

#endif
