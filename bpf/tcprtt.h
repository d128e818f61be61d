/* Shared by tcprtt.bpf.c and the tcprtt front end. */
#ifndef __TCPRTT_H
#define __TCPRTT_H

/* Indexes of the per-CPU error counters (errors.bpf.h). */
enum tcprtt_error {
	/* An address had no histogram: the map was full. */
	ERR_HISTS_FULL,
	ERR_MAX,
};

/* A histogram's key: all zero for "All Addresses", else the local (-b) or
 * remote (-B) address, IPv4 in the first 4 bytes; with --per-container
 * the socket's cgroup too. */
struct rtt_key {
	__u16 family;
	__u16 pad[3];
	__u8 addr[16];
	__u64 cgroup_id;
};

#endif
