/* Shared by funccount.bpf.c and the funccount front end. */
#ifndef __FUNCCOUNT_H
#define __FUNCCOUNT_H

#define TASK_COMM_LEN 16

/* -P: a process's calls of one probe. */
struct fc_key {
	__u32 tgid;
	/* The probe's index (its attach cookie). */
	__u32 probe;
};

struct fc_pcount {
	__u64 count;
	char comm[TASK_COMM_LEN];
};

enum fc_error {
	/* -P: the per-process map was full: a call not counted. */
	ERR_FC_FULL,
	ERR_MAX,
};

#endif
