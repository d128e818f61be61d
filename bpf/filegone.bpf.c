// SPDX-License-Identifier: GPL-2.0
/* filegone: files deleted (unlink, unlinkat, rmdir) or renamed (rename,
 * renameat, renameat2), each at its successful return, with the paths as
 * passed and, for a relative one, its base directory walked to the root.
 *
 * The calls' own tracepoints where the kernel has them (they run for
 * these calls only), else tp_btf sys_enter/sys_exit testing the call's
 * number first. The paths are read at exit from the user memory the entry
 * noted: the call has not freed it. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "filegone.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"
#include "callset.bpf.h"
#include "paths.bpf.h"

CALL_SET(GONE_CALLS)

struct event event_layout = {};
enum gone_call gone_call_btf;

struct start {
	const char *path[2];
	__s32 dfd[2];
	__u32 flags;
	__u32 call;
};

/* By thread; LRU: a thread that dies inside a call leaves its entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct start);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct event);
} scratch SEC(".maps");

/* The walkers (slot 0: the first path's base directory, slot 1: the
 * second's), each verified once, for the exit tracepoints' programs; two
 * walks in one program exceed the verifier's limit. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u32);
} walker SEC(".maps");

static __always_inline void entered(__u32 call, __s32 dfd0, const char *path0, __s32 dfd1,
				    const char *path1, __u32 flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct start s = {
		.path = { path0, path1 },
		.dfd = { dfd0, dfd1 },
		.flags = flags,
		.call = call,
	};

	if (!task_allowed(id) || !cgroup_allowed())
		return;
	bpf_map_update_elem(&starts, &tid, &s, BPF_ANY);
}

/* Whether path `i` of `e` needs its base directory walked: it is
 * relative, and (the second) not in the first's directory. */
static __always_inline bool needs_walk(struct event *e, int i)
{
	__u32 at = i ? e->len[0] : 0;

	if (!e->len[i & 1] || at >= PATH_MAX + 1)
		return false;
	if (e->buf[at & (2 * PATH_MAX - 1)] == '/')
		return false;
	return !i || e->dfd[1] != e->dfd[0] || e->buf[0] == '/';
}

/* Walks path `i`'s base directory after what the record holds, then
 * sends the record unless the second path needs a walk too and `chain`
 * (the tail call to the second walker; where it fails, or without
 * `chain`, the second path stays as passed). */
static __always_inline int walk_and_send(void *ctx, int i, bool chain)
{
	__u32 zero = 0, paths, off, size;
	struct event *e = bpf_map_lookup_elem(&scratch, &zero);
	struct dentry *dentry = 0;
	struct vfsmount *mnt = 0;

	if (!e)
		return 0;
	paths = e->len[0] + e->len[1];
	if (paths > 2 * PATH_MAX || e->size < paths)
		return 0;
	off = e->size - paths;
	if (off > WALK_BUF_SIZE)
		return 0;
	if (needs_walk(e, i)) {
		if (base_dir(e->dfd[i & 1], &dentry, &mnt))
			off = walk_path(&e->buf[paths], off, dentry, mnt, &e->depth[i & 1],
					&e->truncated[i & 1]);
		else
			e->truncated[i & 1] = 1;
		e->walked |= 1 << i;
	}
	size = paths + off;
	if (size > GONE_BUF_SIZE)
		return 0;
	e->size = size;
	if (!i && chain && needs_walk(e, 1))
		bpf_tail_call(ctx, &walker, 1);
	/* Bounded again in the register the call takes (the compiler would
	 * drop a second test it knows holds, and reload the value). */
	barrier_var(size);
	if (size <= GONE_BUF_SIZE)
		emit(e, __builtin_offsetof(struct event, buf) + size);
	return 0;
}

SEC("tracepoint")
int gone_walk_first(void *ctx)
{
	return walk_and_send(ctx, 0, true);
}

SEC("tracepoint")
int gone_walk_second(void *ctx)
{
	return walk_and_send(ctx, 1, false);
}

/* A call returns: a successful one's record, with its paths. */
static __always_inline void exited(void *ctx, long ret, bool walk_inline)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	struct start *found, s;
	struct event *e;
	long len0, len1 = 0;

	found = bpf_map_lookup_elem(&starts, &tid);
	if (!found)
		return;
	s = *found;
	bpf_map_delete_elem(&starts, &tid);
	if (ret != 0)
		return;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return;
	task_header_now(&e->task);
	e->dfd[0] = s.dfd[0];
	e->dfd[1] = s.dfd[1];
	e->flags = s.flags;
	e->call = s.call;
	e->depth[0] = e->depth[1] = 0;
	e->truncated[0] = e->truncated[1] = 0;
	e->walked = 0;
	len0 = bpf_probe_read_user_str(e->buf, PATH_MAX, s.path[0]);
	if (len0 <= 0) {
		e->buf[0] = 0;
		len0 = 1;
	}
	len0 &= 2 * PATH_MAX - 1; /* no-op (len0 <= PATH_MAX), for the verifier */
	if (s.path[1]) {
		len1 = bpf_probe_read_user_str(&e->buf[len0], PATH_MAX, s.path[1]);
		if (len1 <= 0) {
			e->buf[len0] = 0;
			len1 = 1;
		}
	}
	e->len[0] = len0;
	e->len[1] = len1;
	e->size = len0 + len1;
	if (walk_inline) {
		walk_and_send(ctx, 0, false);
		return;
	}
	bpf_tail_call(ctx, &walker, 0);
	/* The tail call failed: the paths as passed. */
	if (len0 + len1 <= 2 * PATH_MAX)
		emit(e, __builtin_offsetof(struct event, buf) + len0 + len1);
}

#define AT_REMOVEDIR 0x200

/* The calls' own tracepoints. A program may read no further into its
 * context than the tracepoint's record goes: each entry reads its own
 * call's arguments. */
#define EXITED(ctx, ret) exited(ctx, ret, false)
#define GONE_EXIT(name) CALL_EXIT(gone, name, EXITED)

SEC("tracepoint/syscalls/sys_enter_unlink")
int gone_enter_unlink(struct trace_event_raw_sys_enter *ctx)
{
	entered(GONE_UNLINK, AT_FDCWD, (const char *)ctx->args[0], 0, 0, 0);
	return 0;
}
GONE_EXIT(unlink)

SEC("tracepoint/syscalls/sys_enter_unlinkat")
int gone_enter_unlinkat(struct trace_event_raw_sys_enter *ctx)
{
	entered(GONE_UNLINKAT, ctx->args[0], (const char *)ctx->args[1], 0, 0, ctx->args[2]);
	return 0;
}
GONE_EXIT(unlinkat)

SEC("tracepoint/syscalls/sys_enter_rmdir")
int gone_enter_rmdir(struct trace_event_raw_sys_enter *ctx)
{
	entered(GONE_RMDIR, AT_FDCWD, (const char *)ctx->args[0], 0, 0, AT_REMOVEDIR);
	return 0;
}
GONE_EXIT(rmdir)

SEC("tracepoint/syscalls/sys_enter_rename")
int gone_enter_rename(struct trace_event_raw_sys_enter *ctx)
{
	entered(GONE_RENAME, AT_FDCWD, (const char *)ctx->args[0], AT_FDCWD,
		(const char *)ctx->args[1], 0);
	return 0;
}
GONE_EXIT(rename)

SEC("tracepoint/syscalls/sys_enter_renameat")
int gone_enter_renameat(struct trace_event_raw_sys_enter *ctx)
{
	entered(GONE_RENAMEAT, ctx->args[0], (const char *)ctx->args[1], ctx->args[2],
		(const char *)ctx->args[3], 0);
	return 0;
}
GONE_EXIT(renameat)

SEC("tracepoint/syscalls/sys_enter_renameat2")
int gone_enter_renameat2(struct trace_event_raw_sys_enter *ctx)
{
	entered(GONE_RENAMEAT2, ctx->args[0], (const char *)ctx->args[1], ctx->args[2],
		(const char *)ctx->args[3], ctx->args[4]);
	return 0;
}
GONE_EXIT(renameat2)

/* Where they are missing: every call's entry and exit. */
SEC("tp_btf/sys_enter")
int BPF_PROG(gone_btf_enter, struct pt_regs *regs, long nr)
{
	long a0 = PT_REGS_PARM1_SYSCALL(regs), a1 = PT_REGS_PARM2_SYSCALL(regs);
	long a2 = PT_REGS_PARM3_SYSCALL(regs), a3 = PT_REGS_PARM4_SYSCALL(regs);
	int call = call_of(nr);

	if (call < 0 || compat_syscall())
		return 0;
	switch (call) {
	case GONE_UNLINK:
		entered(call, AT_FDCWD, (const char *)a0, 0, 0, 0);
		break;
	case GONE_RMDIR:
		entered(call, AT_FDCWD, (const char *)a0, 0, 0, AT_REMOVEDIR);
		break;
	case GONE_UNLINKAT:
		entered(call, a0, (const char *)a1, 0, 0, a2);
		break;
	case GONE_RENAME:
		entered(call, AT_FDCWD, (const char *)a0, AT_FDCWD, (const char *)a1, 0);
		break;
	default:
		entered(call, a0, (const char *)a1, a2, (const char *)a3,
			call == GONE_RENAMEAT2 ? PT_REGS_PARM5_SYSCALL(regs) : 0);
	}
	return 0;
}

#define EXITED_INLINE(ctx, ret) exited(ctx, ret, true)
CALL_SET_BTF_EXIT(gone_btf_exit, EXITED_INLINE)

char LICENSE[] SEC("license") = "GPL";
