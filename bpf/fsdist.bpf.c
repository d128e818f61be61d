// SPDX-License-Identifier: GPL-2.0
/* fsdist: the latency of one file system's reads, writes, opens, fsyncs
 * and getattrs as log2 histograms kept in the kernel, one per operation.
 *
 * On the file system's own operations (ext4_file_read_iter...) where the
 * kernel allows: fentry and fexit, their targets set by the front end;
 * else kprobes and one kretprobe, attached by the front end. Where it has
 * neither, at the system calls that reach them (systime.bpf.h: tp_btf,
 * raw_tp before 5.11), each call counted when its file's superblock is of
 * the file system (getattr has no descriptor there: not counted). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "fsdist.h"
#include "bits.bpf.h"
#include "systime.bpf.h"

const volatile bool per_container = false;
const volatile bool millis = false;
const volatile bool fine = false;
/* The file system's superblock magic: the system call mode's filter. */
const volatile __u64 fs_magic = 0;

HIST_MAPS(struct fsdist_key, struct hist, 10240);

struct dist_start {
	__u64 ts;
	__u32 op;
	__u32 pad;
};

/* By thread (one call at a time each); LRU: a thread that dies inside a
 * call leaves its entry behind. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct dist_start);
} dist_starts SEC(".maps");

static __always_inline void dist_add(__u32 op, __u64 ns)
{
	struct fsdist_key key = {};
	struct fine_hist *fh = 0;
	struct hist *h;

	key.op = op;
	if (per_container)
		key.cgroup_id = bpf_get_current_cgroup_id();
	h = lookup_or_try_init(&hists, &key, &zero_hist);
	if (!h)
		return;
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &key, &zero_fine);
	hist_add(h, fh, ns / (millis ? 1000000 : 1000));
}

static __always_inline void dist_enter(__u32 op)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct dist_start s = {};

	if (!task_allowed(id) || !cgroup_allowed())
		return;
	s.ts = bpf_ktime_get_ns();
	s.op = op;
	bpf_map_update_elem(&dist_starts, &tid, &s, BPF_ANY);
}

static __always_inline void dist_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct dist_start *s = bpf_map_lookup_elem(&dist_starts, &tid);

	if (!s)
		return;
	dist_add(s->op, bpf_ktime_get_ns() - s->ts);
	bpf_map_delete_elem(&dist_starts, &tid);
}

/* Each operation's entry and exit: only the time matters, so the
 * programs take no arguments and one fexit program serves every
 * signature. */
#define DIST_FENTRY(name, op)				\
	SEC("fentry")					\
	int BPF_PROG(fs_fentry_##name)			\
	{						\
		dist_enter(op);				\
		return 0;				\
	}						\
	SEC("fexit")					\
	int BPF_PROG(fs_fexit_##name)			\
	{						\
		dist_exit();				\
		return 0;				\
	}						\
	SEC("kprobe")					\
	int BPF_KPROBE(fs_kprobe_##name)		\
	{						\
		dist_enter(op);				\
		return 0;				\
	}

DIST_FENTRY(read, FOP_READ)
DIST_FENTRY(write, FOP_WRITE)
DIST_FENTRY(open, FOP_OPEN)
DIST_FENTRY(fsync, FOP_FSYNC)
DIST_FENTRY(getattr, FOP_GETATTR)

/* One return probe for all: the entry says which call it was. */
SEC("kretprobe")
int BPF_KRETPROBE(fs_kretprobe)
{
	dist_exit();
	return 0;
}

/* The system call mode: a call of a kind in file_ops ends; counted when
 * its file is the file system's (an open's, the descriptor it returned: a
 * failed open names no file and is not counted). */
static __always_inline void dist_sys_done(long nr, long fd, __u64 off, long ret, __u64 start,
					  __u64 now)
{
	__u32 op = file_op(nr);
	struct file *f;

	(void)off;
	if (compat_syscall() || !sys_allowed())
		return;
	if (op == FOP_OPEN)
		f = ret >= 0 ? fd_file(ret) : 0;
	else
		f = fd_file(fd);
	if (!f || BPF_CORE_READ(f, f_inode, i_sb, s_magic) != fs_magic)
		return;
	dist_add(op, now - start);
}

TIMED_SYSCALL_PROGRAMS(dist_sys_done);

char LICENSE[] SEC("license") = "GPL";
