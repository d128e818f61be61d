// SPDX-License-Identifier: GPL-2.0
/* filetop: reads and writes per thread and file, summed in the kernel and
 * drained by the front end each interval.
 *
 * On vfs_read/vfs_write where the kernel allows: fexit (the bytes done),
 * else kprobes (the bytes asked, as BCC). Where it has neither, at the exit
 * of the read and write system calls, the file found from the descriptor. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "filetop.h"
#include "fileio.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"

/* Without -a: regular files only. */
const volatile bool regular_only = true;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct file_key);
	__type(value, struct file_stat);
} stats SEC(".maps");

/* Counts one call on `f`, whose inode the caller read as its hook allows. */
static __always_inline void account(struct file *f, struct inode *inode, __u32 op, __s64 bytes)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct file_key key = {};
	struct file_stat *st;

	if (!f || bytes < 0 || !task_allowed(id) || !cgroup_allowed())
		return;
	key.file = (__u64)f;
	key.inode = (__u64)inode;
	key.pid = id >> 32;
	key.tid = (__u32)id;
	st = bpf_map_lookup_elem(&stats, &key);
	if (!st) {
		struct file_stat fresh = {};

		fresh.type = file_type(f);
		fresh.skip = regular_only && fresh.type != 'R';
		fresh.ino = BPF_CORE_READ(inode, i_ino);
		fresh.dev = BPF_CORE_READ(inode, i_sb, s_dev);
		bpf_get_current_comm(fresh.comm, sizeof(fresh.comm));
		fresh.cgroup_id = bpf_get_current_cgroup_id();
		file_name(f, fresh.name, sizeof(fresh.name));
		bpf_map_update_elem(&stats, &key, &fresh, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&stats, &key);
		if (!st)
			return;
	}
	if (st->skip)
		return;
	/* The key holds the thread, which runs on one CPU at a time: its
	 * entry has one writer, and needs no locked (atomic) adds. */
	if (op == FOP_READ) {
		st->reads++;
		st->read_bytes += bytes;
	} else {
		st->writes++;
		st->write_bytes += bytes;
	}
}

SEC("fexit/vfs_read")
int BPF_PROG(filetop_fexit_read, struct file *f, char *buf, size_t count, loff_t *pos, ssize_t ret)
{
	account(f, f->f_inode, FOP_READ, ret);
	return 0;
}

SEC("fexit/vfs_write")
int BPF_PROG(filetop_fexit_write, struct file *f, const char *buf, size_t count, loff_t *pos,
	     ssize_t ret)
{
	account(f, f->f_inode, FOP_WRITE, ret);
	return 0;
}

SEC("kprobe/vfs_read")
int BPF_KPROBE(filetop_kprobe_read, struct file *f, char *buf, size_t count)
{
	account(f, BPF_CORE_READ(f, f_inode), FOP_READ, count);
	return 0;
}

SEC("kprobe/vfs_write")
int BPF_KPROBE(filetop_kprobe_write, struct file *f, const char *buf, size_t count)
{
	account(f, BPF_CORE_READ(f, f_inode), FOP_WRITE, count);
	return 0;
}

/* Every read-like and write-like system call's first argument is its
 * descriptor. */
SEC("tp_btf/sys_exit")
int BPF_PROG(filetop_sys_exit, struct pt_regs *regs, long ret)
{
	__u32 op = file_op(SYSCALL_NR(regs));
	struct file *f;

	if ((op != FOP_READ && op != FOP_WRITE) || ret < 0 || compat_syscall())
		return 0;
	f = fd_file(PT_REGS_PARM1_SYSCALL(regs));
	if (f)
		account(f, fd_file_inode(f), op, ret);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
