/* Slow file I/O: a call timed from entry to return and reported when it
 * took at least min_latency_ns, with its file's name (slowio.h's record).
 *
 * On the functions that do the work (fentry, kprobes), entries are kept per
 * thread (a thread is in one call at a time): the file and its position at
 * entry, and the time. At the system calls, below, the time alone. */
#ifndef __SLOWIO_BPF_H
#define __SLOWIO_BPF_H

#include "slowio.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "fileio.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"
#include "maps.bpf.h"
#include "systime.bpf.h"

/* Without -a: regular files only. */
const volatile bool regular_only = true;
/* Only files of the file system with this superblock magic (fsslower in
 * the system call mode); 0: any. */
const volatile __u64 fs_magic = 0;

struct slow_start {
	__u64 ts;
	struct file *file;
	__u64 offset;
	__u32 op;
	char type;
	char pad[3];
};

/* LRU: a thread that dies inside a call leaves its entry behind. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct slow_start);
} slow_starts SEC(".maps");

/* The file's type ('R', 'S', 'O'), or 0 when it is not traced. */
static __always_inline char slow_file_type(struct file *f)
{
	char type = file_type(f);

	if (regular_only && type != 'R')
		return 0;
	if (fs_magic && BPF_CORE_READ(f, f_inode, i_sb, s_magic) != fs_magic)
		return 0;
	return type;
}

/* A call on `f` begins. */
static __always_inline void slow_enter(struct file *f, __u32 op, __u64 offset)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct slow_start s = {};

	if (!f || !task_allowed(id) || !cgroup_allowed())
		return;
	s.type = slow_file_type(f);
	if (!s.type)
		return;
	s.ts = bpf_ktime_get_ns();
	s.file = f;
	s.offset = offset;
	s.op = op;
	bpf_map_update_elem(&slow_starts, &tid, &s, BPF_ANY);
}

static __always_inline void slow_exit(__s64 ret)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tid = (__u32)id;
	struct slow_start *s = bpf_map_lookup_elem(&slow_starts, &tid);
	struct slow_event e = {};
	struct file *f;

	if (!s)
		return;
	e.latency_ns = now - s->ts;
	if (e.latency_ns < min_latency_ns)
		goto done;
	/* Opens and fsyncs return an int, whose register's upper half a
	 * kretprobe must not trust. */
	if (s->op == FOP_OPEN || s->op == FOP_FSYNC)
		ret = (int)ret;
	f = s->file;
	e.type = s->type;
	task_header_now(&e.task);
	/* The completion: the time the latency ends at. */
	e.task.ts_ns = now;
	e.ret = ret;
	e.offset = s->offset;
	e.op = s->op;
	file_name(f, e.name, sizeof(e.name));
	emit(&e, sizeof(e));
done:
	bpf_map_delete_elem(&slow_starts, &tid);
}

/* A slow call ends: `nr` a kind in file_ops, `fd` and `off` its first and
 * fourth arguments, `ret` its return. */
static __always_inline void slow_sys_done(long nr, long fd, __u64 off, long ret, __u64 start,
					  __u64 now)
{
	__u32 op = file_op(nr);
	struct slow_event e = {};
	struct file *f;

	if (compat_syscall() || !sys_allowed())
		return;
	if (op == FOP_OPEN) {
		/* The descriptor it returned. */
		f = ret >= 0 ? fd_file(ret) : 0;
		ret = 0;
	} else {
		f = fd_file(fd);
	}
	if (!f)
		return;
	e.type = slow_file_type(f);
	if (!e.type)
		return;
	if (op == FOP_READ || op == FOP_WRITE) {
		/* Where it started: its offset argument (preadv2's -1 is the
		 * file's position), or the position it moved from: the
		 * position now, less what it did (a pipe's stays at 0). */
		if (file_op_positional(nr) && off != (__u64)-1) {
			e.offset = off;
		} else {
			__u64 pos = BPF_CORE_READ(f, f_pos), done = ret > 0 ? ret : 0;

			e.offset = pos >= done ? pos - done : 0;
		}
	}
	task_header_now(&e.task);
	/* The completion: the time the latency ends at. */
	e.task.ts_ns = now;
	e.latency_ns = now - start;
	e.ret = ret;
	e.op = op;
	file_name(f, e.name, sizeof(e.name));
	emit(&e, sizeof(e));
}

/* The system call mode's programs (systime.bpf.h), each slow call ending
 * in slow_sys_done. */
#define SLOW_SYSCALL_PROGRAMS() TIMED_SYSCALL_PROGRAMS(slow_sys_done)

#endif
