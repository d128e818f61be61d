/* Shared by sofdsnoop.bpf.c and the sofdsnoop front end. */
#ifndef __SOFDSNOOP_H
#define __SOFDSNOOP_H

#include "task.h"

/* The calls that pass descriptors (SCM_RIGHTS) over unix sockets. */
enum fd_call {
	CALL_SENDMSG = 0,
	CALL_RECVMSG = 1,
	CALL_SENDMMSG = 2,
	CALL_RECVMMSG = 3,
	FD_CALLS = 4,
};

/* The descriptors of one message kept in a record (a message may carry up
 * to 253: the record says how many it had), and the messages of one
 * sendmmsg()/recvmmsg() read. */
#define MAX_FDS 16
#define MAX_MSGS 8
/* A file's name as its dentry has it (the last component of a path; a
 * pseudo file's "[eventfd]"), cut to this. */
#define FILE_NAME_LEN 48

/* A descriptor passed: its number in the sender's table (SEND) or the
 * receiver's (RECV), and its file. */
struct passed {
	__s32 fd;
	__u32 mode;
	__u64 ino;
	/* The file's super block: its device and file system magic (a
	 * socket's, a pipe's, an anonymous inode's). */
	__u32 dev;
	__u32 magic;
	char name[FILE_NAME_LEN];
};

/* One message that carried descriptors, at its call's return. */
struct event {
	struct task_header task;
	/* The call's result (bytes; messages for the mmsg calls). */
	__s64 ret;
	__u64 sock_ino;
	__s32 sock_fd;
	__u32 call;
	/* The message's index in an mmsg call's vector. */
	__u32 msg;
	/* Descriptors the message carried; the first MAX_FDS are below. */
	__u32 count;
	struct passed fds[MAX_FDS];
};

#endif
