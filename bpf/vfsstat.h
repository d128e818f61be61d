/* Shared by vfsstat.bpf.c and the vfsstat front end. */
#ifndef __VFSSTAT_H
#define __VFSSTAT_H

/* The counters, in BCC's column order; kept in BTF (vfsstat.bpf.c). In the
 * system call mode, `syscall_class` maps each syscall number to one of
 * these plus one (0, as the array starts: not counted). */
enum vfs_stat {
	VS_READ,
	VS_WRITE,
	VS_FSYNC,
	VS_OPEN,
	VS_CREATE,
	VS_MAX,
};

#define MAX_SYSCALL_NR 1024

#endif
