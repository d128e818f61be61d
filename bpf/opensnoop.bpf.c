// SPDX-License-Identifier: GPL-2.0
/* opensnoop: open, openat, openat2 and creat.
 *
 * Three variants; the front end loads one. Where tp_btf exists, one
 * program on sys_exit reads the arguments from the registers the syscall
 * was entered with (its argument) and detaches at once (syscalls.bpf.h).
 * Elsewhere, classic tracepoints: where bpf_task_pt_regs exists
 * (5.15+), one program per syscall runs at exit and reads the arguments from
 * the task's saved user registers: no entry tracepoint and no map traffic,
 * a third of the cost per open. Elsewhere, the arguments are kept in a hash
 * map at entry and picked up at exit. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "opensnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"
#include "paths.bpf.h"

#define O_ACCMODE 03
#define O_WRONLY 01
#define O_CREAT 0100
#define O_TRUNC 01000

const volatile bool failed_only = false;
const volatile bool full_path = false;
/* -f: an open matches if it has any flag of flag_mask, or (O_RDONLY being
 * zero) if match_rdonly and its access mode is read-only. */
const volatile __u32 flag_mask = 0;
const volatile bool match_rdonly = false;
/* The syscalls' numbers on this architecture (-1: it has no such call). */
const volatile long nr_open = -1;
const volatile long nr_openat = -1;
const volatile long nr_openat2 = -1;
const volatile long nr_creat = -1;

struct open_args {
	const char *fname;
	__s32 dfd;
	__s32 flags;
	__u32 mode;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct open_args);
} start SEC(".maps");

/* -F: the directory walk is its own program, reached by tail call from the
 * four exit programs, so the verifier checks it once rather than four times. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} walker SEC(".maps");

/* The event is built here: it is too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct event);
} scratch SEC(".maps");

static __always_inline bool flags_match(__s32 flags)
{
	if (!flag_mask && !match_rdonly)
		return true;
	if (flags & flag_mask)
		return true;
	return match_rdonly && (flags & O_ACCMODE) == 0;
}

static __always_inline bool open_allowed(__u64 id, __s32 flags)
{
	return task_allowed(id) && uid_allowed((__u32)bpf_get_current_uid_gid()) &&
	       flags_match(flags) && cgroup_allowed();
}

static __always_inline int open_enter(__s32 dfd, const char *fname, __s32 flags, __u32 mode)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct open_args args = { .fname = fname, .dfd = dfd, .flags = flags, .mode = mode };

	if (open_allowed(id, flags))
		bpf_map_update_elem(&start, &tid, &args, BPF_ANY);
	return 0;
}

/* Resolves a relative path's base directory, the cwd or dfd's file, into
 * e->buf after the path, then sends the event. Reached only by tail call,
 * from a program of its own type. */
static __always_inline int walk_and_send(void)
{
	struct dentry *dentry = 0;
	struct vfsmount *mnt = 0;
	struct event *e;
	__u32 zero = 0, off;

	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	off = e->size;
	if (base_dir(e->dfd, &dentry, &mnt) && off <= PATH_MAX)
		off = walk_path(e->buf, off, dentry, mnt, &e->dir_depth, &e->dir_truncated);
	else
		e->dir_truncated = 1;
	e->size = off;
	if (off <= WALK_BUF_SIZE)
		emit(e, __builtin_offsetof(struct event, buf) + off);
	return 0;
}

SEC("tracepoint")
int open_walk_dirs(void *ctx)
{
	return walk_and_send();
}


/* Builds and sends the event for one finished open; with -F and a relative
 * path, the walker program finishes and sends it. */
static __always_inline int send_open(void *ctx, long ret, __s32 dfd, const char *fname,
				     __s32 flags, __u32 mode, bool walk_inline)
{
	__u32 zero = 0;
	struct event *e;
	long len;

	if (failed_only && ret >= 0)
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	task_header_now(&e->task);
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->ret = ret;
	e->flags = flags;
	e->mode = mode;
	e->dfd = dfd;
	e->dir_depth = 0;
	e->dir_truncated = 0;
	len = bpf_probe_read_user_str(e->buf, PATH_MAX, fname);
	if (len <= 0) {
		e->buf[0] = 0;
		len = 1;
	}
	e->size = len;
	if (full_path && e->buf[0] != '/') {
		/* One program verifies the walk once without a tail call. */
		if (walk_inline)
			return walk_and_send();
		bpf_tail_call(ctx, &walker, 0);
	}
	/* Without -F, with an absolute path, or if the tail call failed. */
	if (len <= PATH_MAX)
		emit(e, __builtin_offsetof(struct event, buf) + len);
	return 0;
}

static __always_inline int open_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct open_args *found, args;

	found = bpf_map_lookup_elem(&start, &tid);
	if (!found)
		return 0;
	args = *found;
	bpf_map_delete_elem(&start, &tid);
	return send_open(ctx, ctx->ret, args.dfd, args.fname, args.flags, args.mode, false);
}

/* The registers the task entered the syscall with; they still hold its
 * arguments at exit. */
static __always_inline struct pt_regs *user_regs(void)
{
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

static __always_inline int regs_exit(void *ctx, long ret, __s32 dfd, const char *fname,
				     __s32 flags, __u32 mode, bool walk_inline)
{
	__u64 id = bpf_get_current_pid_tgid();

	if (!open_allowed(id, flags))
		return 0;
	return send_open(ctx, ret, dfd, fname, flags, mode, walk_inline);
}

SEC("tracepoint/syscalls/sys_exit_open")
int open_regs_open(struct trace_event_raw_sys_exit *ctx)
{
	struct pt_regs *regs = user_regs();

	return regs_exit(ctx, ctx->ret, AT_FDCWD, (const char *)PT_REGS_PARM1_SYSCALL(regs),
			 PT_REGS_PARM2_SYSCALL(regs), PT_REGS_PARM3_SYSCALL(regs), false);
}

SEC("tracepoint/syscalls/sys_exit_openat")
int open_regs_openat(struct trace_event_raw_sys_exit *ctx)
{
	struct pt_regs *regs = user_regs();

	return regs_exit(ctx, ctx->ret, PT_REGS_PARM1_SYSCALL(regs),
			 (const char *)PT_REGS_PARM2_SYSCALL(regs), PT_REGS_PARM3_SYSCALL(regs),
			 PT_REGS_PARM4_SYSCALL(regs), false);
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int open_regs_openat2(struct trace_event_raw_sys_exit *ctx)
{
	struct pt_regs *regs = user_regs();
	struct open_how how = {};

	bpf_probe_read_user(&how, sizeof(how), (void *)PT_REGS_PARM3_SYSCALL(regs));
	return regs_exit(ctx, ctx->ret, PT_REGS_PARM1_SYSCALL(regs),
			 (const char *)PT_REGS_PARM2_SYSCALL(regs), how.flags, how.mode, false);
}

SEC("tracepoint/syscalls/sys_exit_creat")
int open_regs_creat(struct trace_event_raw_sys_exit *ctx)
{
	struct pt_regs *regs = user_regs();

	return regs_exit(ctx, ctx->ret, AT_FDCWD, (const char *)PT_REGS_PARM1_SYSCALL(regs),
			 O_CREAT | O_WRONLY | O_TRUNC, PT_REGS_PARM2_SYSCALL(regs), false);
}

/* Every syscall's exit (tp_btf: the registers are read directly, the
 * cheapest test of the syscall's number): the opens, with their arguments
 * from the registers they were entered with. */
SEC("tp_btf/sys_exit")
int BPF_PROG(open_btf_exit, struct pt_regs *regs, long ret)
{
	long nr = SYSCALL_NR(regs);
	__u64 a1, a2, a3;

	if (nr != nr_openat && nr != nr_open && nr != nr_openat2 && nr != nr_creat)
		return 0;
	if (compat_syscall())
		return 0;
	a1 = PT_REGS_PARM1_SYSCALL(regs);
	a2 = PT_REGS_PARM2_SYSCALL(regs);
	a3 = PT_REGS_PARM3_SYSCALL(regs);
	if (nr == nr_openat)
		return regs_exit(ctx, ret, a1, (const char *)a2, a3, PT_REGS_PARM4_SYSCALL(regs),
				 true);
	if (nr == nr_open)
		return regs_exit(ctx, ret, AT_FDCWD, (const char *)a1, a2, a3, true);
	if (nr == nr_creat)
		return regs_exit(ctx, ret, AT_FDCWD, (const char *)a1, O_CREAT | O_WRONLY | O_TRUNC,
				 a2, true);
	{
		struct open_how how = {};

		bpf_probe_read_user(&how, sizeof(how), (void *)a3);
		return regs_exit(ctx, ret, a1, (const char *)a2, how.flags, how.mode, true);
	}
}

/* open(filename, flags, mode) */
SEC("tracepoint/syscalls/sys_enter_open")
int open_enter_open(struct trace_event_raw_sys_enter *ctx)
{
	return open_enter(AT_FDCWD, (const char *)ctx->args[0], ctx->args[1], ctx->args[2]);
}

/* openat(dfd, filename, flags, mode) */
SEC("tracepoint/syscalls/sys_enter_openat")
int open_enter_openat(struct trace_event_raw_sys_enter *ctx)
{
	return open_enter(ctx->args[0], (const char *)ctx->args[1], ctx->args[2], ctx->args[3]);
}

/* openat2(dfd, filename, how, size): flags and mode live in user memory. */
SEC("tracepoint/syscalls/sys_enter_openat2")
int open_enter_openat2(struct trace_event_raw_sys_enter *ctx)
{
	struct open_how how = {};

	bpf_probe_read_user(&how, sizeof(how), (void *)ctx->args[2]);
	return open_enter(ctx->args[0], (const char *)ctx->args[1], how.flags, how.mode);
}

/* creat(pathname, mode) is open(pathname, O_CREAT|O_WRONLY|O_TRUNC, mode) */
SEC("tracepoint/syscalls/sys_enter_creat")
int open_enter_creat(struct trace_event_raw_sys_enter *ctx)
{
	return open_enter(AT_FDCWD, (const char *)ctx->args[0], O_CREAT | O_WRONLY | O_TRUNC,
			  ctx->args[1]);
}

SEC("tracepoint/syscalls/sys_exit_open")
int open_exit_open(struct trace_event_raw_sys_exit *ctx)
{
	return open_exit(ctx);
}

SEC("tracepoint/syscalls/sys_exit_openat")
int open_exit_openat(struct trace_event_raw_sys_exit *ctx)
{
	return open_exit(ctx);
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int open_exit_openat2(struct trace_event_raw_sys_exit *ctx)
{
	return open_exit(ctx);
}

SEC("tracepoint/syscalls/sys_exit_creat")
int open_exit_creat(struct trace_event_raw_sys_exit *ctx)
{
	return open_exit(ctx);
}

/* --exec: children of a traced process are traced too (make, sh -c ...).
 * Runs in the parent, so the current tgid is the one to test. */
SEC("tracepoint/sched/sched_process_fork")
int open_follow_fork(struct trace_event_raw_sched_process_fork *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 child = ctx->child_pid;
	__u8 yes = 1;

	if (bpf_map_lookup_elem(&pid_filter, &tgid))
		bpf_map_update_elem(&pid_filter, &child, &yes, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(open_btf_follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u32 child_tgid = child->tgid;
	__u8 yes = 1;

	if (bpf_map_lookup_elem(&pid_filter, &tgid))
		bpf_map_update_elem(&pid_filter, &child_tgid, &yes, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
