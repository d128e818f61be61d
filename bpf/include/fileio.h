/* The file system calls the file tools count or time at sys_exit, by kind:
 * a syscall number's kind is in the `file_ops` array the front end fills
 * (common::kernel::fileio), 0 for the others. Kept in BTF (common.bpf.c). */
#ifndef __FILEIO_H
#define __FILEIO_H

enum file_op {
	FOP_NONE = 0,
	FOP_READ = 1,
	FOP_WRITE = 2,
	FOP_FSYNC = 3,
	FOP_OPEN = 4,
	/* Not a system call's: fsdist's getattr, at the file system's own. */
	FOP_GETATTR = 5,
	FOP_MAX_NR = 1024,
	/* The kind is in the low byte; this bit marks the calls that take
	 * their file offset as the fourth argument (pread64, pwritev...). */
	FOP_KIND_MASK = 0xff,
	FOP_POSITIONAL = 0x100,
};

#endif
