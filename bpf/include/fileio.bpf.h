/* File I/O seen at the system calls (fileio.h): the syscall kind table,
 * and what a tool reads of a descriptor's file. */
#ifndef __FILEIO_BPF_H
#define __FILEIO_BPF_H

#include "fileio.h"
#include "files.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FOP_MAX_NR);
	__type(key, __u32);
	__type(value, __u32);
} file_ops SEC(".maps");

static __always_inline __u32 file_op_entry(__u32 nr)
{
	__u32 *op;

	if (nr >= FOP_MAX_NR)
		return FOP_NONE;
	op = bpf_map_lookup_elem(&file_ops, &nr);
	return op ? *op : FOP_NONE;
}

/* The kind of system call `nr` (FOP_NONE for those not traced). */
static __always_inline __u32 file_op(__u32 nr)
{
	return file_op_entry(nr) & FOP_KIND_MASK;
}

/* True for the calls that take their offset as the fourth argument. */
static __always_inline bool file_op_positional(__u32 nr)
{
	return file_op_entry(nr) & FOP_POSITIONAL;
}

#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define S_IFREG 0100000

/* 'R' regular file, 'S' socket, 'O' other (BCC's filetop types). */
static __always_inline char file_type(struct file *f)
{
	__u32 mode = BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT;

	return mode == S_IFREG ? 'R' : mode == S_IFSOCK ? 'S' : 'O';
}

/* The file's name (its dentry's, not the path) into `buf`. */
static __always_inline void file_name(struct file *f, char *buf, __u32 size)
{
	const unsigned char *name = BPF_CORE_READ(f, f_path.dentry, d_name.name);

	bpf_probe_read_kernel_str(buf, size, name);
}

#endif
