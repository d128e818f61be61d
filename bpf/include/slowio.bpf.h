/* Slow file I/O: a call timed from entry to return and reported when it
 * took at least min_latency_ns, with its file's name (slowio.h's record).
 *
 * Entries are kept per thread (a thread is in one call at a time): the
 * file and its position at entry, and the time. An open seen at the system
 * call has no file at entry: it is the descriptor returned, found at exit. */
#ifndef __SLOWIO_BPF_H
#define __SLOWIO_BPF_H

#include "slowio.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "fileio.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"

const volatile __u64 min_latency_ns = 0;
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

/* A call on `f` begins; `f` may be NULL only for an open at the system
 * call. */
static __always_inline void slow_enter(struct file *f, __u32 op, __u64 offset)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct slow_start s = {};

	if ((!f && op != FOP_OPEN) || !task_allowed(id) || !cgroup_allowed())
		return;
	if (f) {
		s.type = slow_file_type(f);
		if (!s.type)
			return;
	}
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
	if (!f) {
		/* An open at the system call: the descriptor it returned. */
		f = ret >= 0 ? fd_file(ret) : 0;
		if (!f)
			goto done;
		e.type = slow_file_type(f);
		if (!e.type)
			goto done;
		ret = 0;
	}
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

/* The file's position (where a read or write without an offset starts). */
static __always_inline __u64 file_pos(struct file *f)
{
	return f ? BPF_CORE_READ(f, f_pos) : 0;
}

/* The system call mode, from tp_btf sys_enter: a call of a kind in the
 * tool's file_ops table begins. pread64, preadv, preadv2 and their writes
 * carry their offset as the fourth argument; reads and writes without one
 * start at the file's position; fsyncs at 0; opens are resolved at exit
 * from the descriptor returned. */
static __always_inline void slow_sys_enter(struct pt_regs *regs, long id)
{
	__u32 op = file_op(id);
	struct file *f;

	if (op == FOP_NONE || compat_syscall())
		return;
	if (op == FOP_OPEN) {
		slow_enter(0, op, 0);
		return;
	}
	f = fd_file(PT_REGS_PARM1_SYSCALL(regs));
	if (op == FOP_FSYNC)
		slow_enter(f, op, 0);
	else
		slow_enter(f, op,
			   file_op_positional(id) ? PT_REGS_PARM4_SYSCALL(regs) : file_pos(f));
}

/* ... and from tp_btf sys_exit, it returns. */
static __always_inline void slow_sys_exit(struct pt_regs *regs, long ret)
{
	if (file_op(SYSCALL_NR(regs)) != FOP_NONE)
		slow_exit(ret);
}

/* The system call mode's two programs (fs_sys_enter, fs_sys_exit), for a
 * kernel without fentry or kprobes on the file system's functions. */
#define SLOW_SYSCALL_PROGRAMS()						\
	SEC("tp_btf/sys_enter")						\
	int BPF_PROG(fs_sys_enter, struct pt_regs *regs, long id)	\
	{								\
		slow_sys_enter(regs, id);				\
		return 0;						\
	}								\
	SEC("tp_btf/sys_exit")						\
	int BPF_PROG(fs_sys_exit, struct pt_regs *regs, long ret)	\
	{								\
		slow_sys_exit(regs, ret);				\
		return 0;						\
	}								\
	struct slow_syscall_programs_end

#endif
