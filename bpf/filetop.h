/* Shared by filetop.bpf.c and the filetop front end. */
#ifndef __FILETOP_H
#define __FILETOP_H

#include "task.h"

#define FILE_NAME_LEN 64

/* I/O per thread and open file: what can be had per call without reading
 * the file (its struct file and inode pointers). The front end merges
 * entries of the same device and inode. */
struct file_key {
	__u64 file;
	__u64 inode;
	__u32 pid;
	__u32 tid;
};

struct file_stat {
	__u64 reads;
	__u64 writes;
	__u64 read_bytes;
	__u64 write_bytes;
	/* Read once, when the entry is made. */
	__u64 ino;
	__u64 cgroup_id;
	__u32 dev;
	/* 'R' regular, 'S' socket, 'O' other. */
	char type;
	/* Not shown (not a regular file, without -a): ignored from then on. */
	__u8 skip;
	char pad[2];
	char comm[TASK_COMM_LEN];
	char name[FILE_NAME_LEN];
};

#endif
