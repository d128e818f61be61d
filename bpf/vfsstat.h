/* Shared by vfsstat.bpf.c and the vfsstat front end. */
#ifndef __VFSSTAT_H
#define __VFSSTAT_H

/* The counters, in BCC's column order (the first four as fileio.h's kinds,
 * one down); kept in BTF (vfsstat.bpf.c). */
enum vfs_stat {
	VS_READ,
	VS_WRITE,
	VS_FSYNC,
	VS_OPEN,
	VS_CREATE,
	VS_MAX,
};

#endif
