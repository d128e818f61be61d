/* Shared by mountsnoop.bpf.c and the mountsnoop front end. */
#ifndef __MOUNTSNOOP_H
#define __MOUNTSNOOP_H

#include "task.h"
#define MOUNT_STR 256

enum mount_call {
	CALL_MOUNT = 0,
	CALL_UMOUNT = 1,
	CALL_FSOPEN = 2,
	CALL_FSMOUNT = 3,
	CALL_MOVE_MOUNT = 4,
};

/* One call, at its return, with its arguments:
 *   mount(str1 source, str2 target, fstype, flags, data)
 *   umount(str1 target, flags)
 *   fsopen(str1 fs_name, flags)
 *   fsmount(fd1 fs_fd, flags, attrs)
 *   move_mount(fd1, str1 from, fd2, str2 to, flags) */
struct event {
	struct task_header task;
	/* The caller's mount namespace (its inode number). */
	__u64 mnt_ns;
	__u64 flags;
	__u64 attrs;
	__s32 ret;
	__u32 call;
	__s32 fd1;
	__s32 fd2;
	__u32 ppid;
	__u32 pad;
	char pcomm[TASK_COMM_LEN];
	char fstype[64];
	char str1[MOUNT_STR];
	char str2[MOUNT_STR];
	char data[MOUNT_STR];
};

#endif
