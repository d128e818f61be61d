// SPDX-License-Identifier: GPL-2.0
/* vfsstat: counts of VFS reads, writes, fsyncs, opens and creates, in
 * per-CPU counters the front end reads each interval.
 *
 * On the VFS functions themselves (fentry, else kprobes) as BCC counts
 * them; where the kernel has neither, at the exit of the system calls that
 * reach them  (one tp_btf program on sys_exit, a table from syscall number to
 * kind, fileio.h), a create being an open whose file came out FMODE_CREATED. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "vfsstat.h"
#include "fileio.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"

#define EBADF 9

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *n;

	if (!task_allowed(bpf_get_current_pid_tgid()) || !cgroup_allowed())
		return;
	n = bpf_map_lookup_elem(&stats, &which);
	if (n)
		*n += 1;
}

SEC("fentry/vfs_read")
int BPF_PROG(vfs_fentry_read) { count(VS_READ); return 0; }
SEC("fentry/vfs_write")
int BPF_PROG(vfs_fentry_write) { count(VS_WRITE); return 0; }
SEC("fentry/vfs_fsync_range")
int BPF_PROG(vfs_fentry_fsync) { count(VS_FSYNC); return 0; }
SEC("fentry/vfs_open")
int BPF_PROG(vfs_fentry_open) { count(VS_OPEN); return 0; }
SEC("fentry/vfs_create")
int BPF_PROG(vfs_fentry_create) { count(VS_CREATE); return 0; }

SEC("kprobe/vfs_read")
int BPF_KPROBE(vfs_kprobe_read) { count(VS_READ); return 0; }
SEC("kprobe/vfs_write")
int BPF_KPROBE(vfs_kprobe_write) { count(VS_WRITE); return 0; }
SEC("kprobe/vfs_fsync_range")
int BPF_KPROBE(vfs_kprobe_fsync) { count(VS_FSYNC); return 0; }
SEC("kprobe/vfs_open")
int BPF_KPROBE(vfs_kprobe_open) { count(VS_OPEN); return 0; }
SEC("kprobe/vfs_create")
int BPF_KPROBE(vfs_kprobe_create) { count(VS_CREATE); return 0; }

/* A read or write on a descriptor that is not open never reaches the VFS;
 * an open counts once it has a file. */
SEC("tp_btf/sys_exit")
int BPF_PROG(vfs_sys_exit, struct pt_regs *regs, long ret)
{
	/* The kinds (fileio.h) follow the counters' order, one up. */
	__u32 op = file_op(SYSCALL_NR(regs)), which = op - 1;
	struct file *f;

	if (op == FOP_NONE || compat_syscall())
		return 0;
	if (op != FOP_OPEN) {
		if (ret != -EBADF)
			count(which);
		return 0;
	}
	if (ret < 0)
		return 0;
	count(VS_OPEN);
	f = fd_file(ret);
	if (f && (BPF_CORE_READ(f, f_mode) & FMODE_CREATED))
		count(VS_CREATE);
	return 0;
}

enum vfs_stat vfs_stat_btf;

char LICENSE[] SEC("license") = "GPL";
