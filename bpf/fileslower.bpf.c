// SPDX-License-Identifier: GPL-2.0
/* fileslower: synchronous reads and writes slower than a threshold, on any
 * file system (slowio.bpf.h times them).
 *
 * On vfs_read/vfs_write where the kernel allows: fentry and fexit, else a
 * kprobe and a kretprobe. Where it has neither, at the read and write
 * system calls (sys_enter and sys_exit: tp_btf, raw_tp before 5.11), the
 * file found from the descriptor at the exit of a slow call: the latency
 * then includes the system call's own. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "slowio.bpf.h"

/* The position a call starts at: `pos` points into the caller's frame. */
static __always_inline __u64 start_pos(loff_t *pos)
{
	loff_t at = 0;

	bpf_probe_read_kernel(&at, sizeof(at), pos);
	return at;
}

/* fentry's `pos` argument, which before 5.15 or so a program may not load
 * from its context (a pointer to an integer): copied out instead. */
static __always_inline loff_t *fentry_pos(unsigned long long *ctx)
{
	loff_t *pos = 0;

	bpf_probe_read_kernel(&pos, sizeof(pos), &ctx[3]);
	return pos;
}

SEC("fentry/vfs_read")
int fs_fentry_read(unsigned long long *ctx)
{
	slow_enter((struct file *)ctx[0], FOP_READ, start_pos(fentry_pos(ctx)));
	return 0;
}

SEC("fexit/vfs_read")
int BPF_PROG(fs_fexit_read, struct file *f, char *buf, size_t count, void *pos, ssize_t ret)
{
	slow_exit(ret);
	return 0;
}

SEC("fentry/vfs_write")
int fs_fentry_write(unsigned long long *ctx)
{
	slow_enter((struct file *)ctx[0], FOP_WRITE, start_pos(fentry_pos(ctx)));
	return 0;
}

SEC("fexit/vfs_write")
int BPF_PROG(fs_fexit_write, struct file *f, const char *buf, size_t count, void *pos,
	     ssize_t ret)
{
	slow_exit(ret);
	return 0;
}

SEC("kprobe/vfs_read")
int BPF_KPROBE(fs_kprobe_read, struct file *f, char *buf, size_t count, loff_t *pos)
{
	slow_enter(f, FOP_READ, start_pos(pos));
	return 0;
}

SEC("kretprobe/vfs_read")
int BPF_KRETPROBE(fs_kretprobe_read, ssize_t ret)
{
	slow_exit(ret);
	return 0;
}

SEC("kprobe/vfs_write")
int BPF_KPROBE(fs_kprobe_write, struct file *f, const char *buf, size_t count, loff_t *pos)
{
	slow_enter(f, FOP_WRITE, start_pos(pos));
	return 0;
}

SEC("kretprobe/vfs_write")
int BPF_KRETPROBE(fs_kretprobe_write, ssize_t ret)
{
	slow_exit(ret);
	return 0;
}

/* The system call mode: slowio.bpf.h's, for the kinds in file_ops. */
SLOW_SYSCALL_PROGRAMS();

/* Keeps the record type in BTF for the front end. */
struct slow_event slow_event_btf;

char LICENSE[] SEC("license") = "GPL";
