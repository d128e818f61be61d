/* Shared by filetop.bpf.c and the filetop front end. */
#ifndef __FILETOP_H
#define __FILETOP_H

#include "task.h"

#define FILE_NAME_LEN 64

/* I/O per thread and file (device and inode: names repeat). */
struct file_key {
	__u64 ino;
	__u32 dev;
	__u32 pid;
	__u32 tid;
	__u32 pad;
	char comm[TASK_COMM_LEN];
};

struct file_stat {
	__u64 reads;
	__u64 writes;
	__u64 read_bytes;
	__u64 write_bytes;
	/* 'R' regular, 'S' socket, 'O' other. */
	char type;
	char name[FILE_NAME_LEN];
};

#endif
