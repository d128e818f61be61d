// SPDX-License-Identifier: GPL-2.0
/* fsslower: reads, writes, opens and fsyncs of one file system slower than
 * a threshold (slowio.bpf.h times them).
 *
 * On the file system's own operations (ext4_file_read_iter...) where the
 * kernel allows: fentry and fexit, their targets set by the front end for
 * the file system chosen; else kprobes and a kretprobe, attached by the
 * front end. Where it has neither, at the system calls that reach them
 * (sys_enter and sys_exit: tp_btf, raw_tp before 5.11), the file found
 * from the descriptor at the exit of a slow call and kept when its
 * superblock's magic is the file system's. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "slowio.bpf.h"

static __always_inline void iter_enter(struct kiocb *iocb, __u32 op)
{
	slow_enter(BPF_CORE_READ(iocb, ki_filp), op, BPF_CORE_READ(iocb, ki_pos));
}

SEC("fentry")
int BPF_PROG(fs_fentry_read, struct kiocb *iocb)
{
	iter_enter(iocb, FOP_READ);
	return 0;
}

SEC("fexit")
int BPF_PROG(fs_fexit_read, struct kiocb *iocb, struct iov_iter *to, ssize_t ret)
{
	slow_exit(ret);
	return 0;
}

SEC("fentry")
int BPF_PROG(fs_fentry_write, struct kiocb *iocb)
{
	iter_enter(iocb, FOP_WRITE);
	return 0;
}

SEC("fexit")
int BPF_PROG(fs_fexit_write, struct kiocb *iocb, struct iov_iter *from, ssize_t ret)
{
	slow_exit(ret);
	return 0;
}

SEC("fentry")
int BPF_PROG(fs_fentry_open, struct inode *inode, struct file *file)
{
	slow_enter(file, FOP_OPEN, 0);
	return 0;
}

SEC("fexit")
int BPF_PROG(fs_fexit_open, struct inode *inode, struct file *file, int ret)
{
	slow_exit(ret);
	return 0;
}

SEC("fentry")
int BPF_PROG(fs_fentry_fsync, struct file *file)
{
	slow_enter(file, FOP_FSYNC, 0);
	return 0;
}

SEC("fexit")
int BPF_PROG(fs_fexit_fsync, struct file *file, loff_t start, loff_t end, int datasync, int ret)
{
	slow_exit(ret);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(fs_kprobe_read, struct kiocb *iocb)
{
	iter_enter(iocb, FOP_READ);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(fs_kprobe_write, struct kiocb *iocb)
{
	iter_enter(iocb, FOP_WRITE);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(fs_kprobe_open, struct inode *inode, struct file *file)
{
	slow_enter(file, FOP_OPEN, 0);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(fs_kprobe_fsync, struct file *file)
{
	slow_enter(file, FOP_FSYNC, 0);
	return 0;
}

/* One return probe for the four: the entry says which call it was. */
SEC("kretprobe")
int BPF_KRETPROBE(fs_kretprobe, long ret)
{
	slow_exit(ret);
	return 0;
}

/* The system call mode: slowio.bpf.h's, for the kinds in file_ops. */
SLOW_SYSCALL_PROGRAMS();

/* Keeps the record type in BTF for the front end. */
struct slow_event slow_event_btf;

char LICENSE[] SEC("license") = "GPL";
