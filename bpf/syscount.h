/* Shared by syscount.bpf.c and the syscount front end. */
#ifndef __SYSCOUNT_H
#define __SYSCOUNT_H

/* Above every system call number of x86_64 and arm64. */
#define NR_SYSCALLS 1024
#define TASK_COMM_LEN 16

/* Calls counted, and (-L) their time (`stat` is a kernel type). */
struct call_stat {
	__u64 count;
	__u64 ns;
};

/* -P: a process's calls, and the name it had at the last one. */
struct pstat {
	__u64 count;
	__u64 ns;
	char comm[TASK_COMM_LEN];
};

#endif
