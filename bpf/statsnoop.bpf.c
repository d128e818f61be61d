// SPDX-License-Identifier: GPL-2.0
/* statsnoop: stat(), lstat(), newfstatat(), statx() and statfs(), each
 * with its path and result, at its return. As opensnoop: one tp_btf
 * program on sys_exit that tests the call's number first, where the
 * kernel has tp_btf; else the calls' own tracepoints at exit, with the
 * arguments from the registers the call was entered with (5.15+), or kept
 * at entry. statx and newfstatat are what stat(1), ls and Python's
 * os.stat call today: BCC's statsnoop does not see newfstatat. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "statsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"
#include "callstash.bpf.h"

#define AT_FDCWD -100

const volatile bool failed_only = false;
/* The calls' numbers on this architecture (-1: it has no such call). */
const volatile long nr_stat = -1;
const volatile long nr_lstat = -1;
const volatile long nr_newfstatat = -1;
const volatile long nr_statx = -1;
const volatile long nr_statfs = -1;

struct event event_layout = {};
enum stat_call stat_call_btf;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct event);
} scratch SEC(".maps");

static __always_inline int report(long ret, __u32 call, __s32 dfd, const char *path)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0;
	struct event *e;
	long len;

	if (failed_only && ret >= 0)
		return 0;
	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	task_header_now(&e->task);
	e->ret = ret;
	e->call = call;
	e->dfd = dfd;
	len = bpf_probe_read_user_str(e->path, sizeof(e->path), path);
	if (len <= 0) {
		e->path[0] = 0;
		len = 1;
	}
	e->size = len;
	if (len <= PATH_MAX)
		emit(e, __builtin_offsetof(struct event, path) + len);
	return 0;
}

/* Every call's exit (tp_btf): the number tested first. */
SEC("tp_btf/sys_exit")
int BPF_PROG(stat_btf_exit, struct pt_regs *regs, long ret)
{
	long nr = SYSCALL_NR(regs);

	if (nr != nr_newfstatat && nr != nr_statx && nr != nr_stat && nr != nr_lstat &&
	    nr != nr_statfs)
		return 0;
	if (compat_syscall())
		return 0;
	if (nr == nr_newfstatat)
		return report(ret, CALL_NEWFSTATAT, PT_REGS_PARM1_SYSCALL(regs),
			      (const char *)PT_REGS_PARM2_SYSCALL(regs));
	if (nr == nr_statx)
		return report(ret, CALL_STATX, PT_REGS_PARM1_SYSCALL(regs),
			      (const char *)PT_REGS_PARM2_SYSCALL(regs));
	return report(ret, nr == nr_stat ? CALL_STAT : nr == nr_lstat ? CALL_LSTAT : CALL_STATFS,
		      AT_FDCWD, (const char *)PT_REGS_PARM1_SYSCALL(regs));
}

/* 5.15+ without tp_btf: each call's exit, the arguments from the
 * registers. */
static __always_inline struct pt_regs *user_regs(void)
{
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

static __always_inline int regs_path(long ret, __u32 call)
{
	struct pt_regs *regs = user_regs();

	return report(ret, call, AT_FDCWD, (const char *)PT_REGS_PARM1_SYSCALL(regs));
}

static __always_inline int regs_at(long ret, __u32 call)
{
	struct pt_regs *regs = user_regs();

	return report(ret, call, PT_REGS_PARM1_SYSCALL(regs),
		      (const char *)PT_REGS_PARM2_SYSCALL(regs));
}

SEC("tracepoint/syscalls/sys_exit_newstat")
int stat_regs_stat(struct trace_event_raw_sys_exit *ctx)
{
	return regs_path(ctx->ret, CALL_STAT);
}

SEC("tracepoint/syscalls/sys_exit_newlstat")
int stat_regs_lstat(struct trace_event_raw_sys_exit *ctx)
{
	return regs_path(ctx->ret, CALL_LSTAT);
}

SEC("tracepoint/syscalls/sys_exit_statfs")
int stat_regs_statfs(struct trace_event_raw_sys_exit *ctx)
{
	return regs_path(ctx->ret, CALL_STATFS);
}

SEC("tracepoint/syscalls/sys_exit_newfstatat")
int stat_regs_newfstatat(struct trace_event_raw_sys_exit *ctx)
{
	return regs_at(ctx->ret, CALL_NEWFSTATAT);
}

SEC("tracepoint/syscalls/sys_exit_statx")
int stat_regs_statx(struct trace_event_raw_sys_exit *ctx)
{
	return regs_at(ctx->ret, CALL_STATX);
}

/* Before 5.15: the arguments kept at entry, by thread. */
struct call {
	const char *path;
	__s32 dfd;
	__u32 call;
};

CALL_STASH(struct call)

static __always_inline int entered(__u32 call, __s32 dfd, const char *path)
{
	struct call c = { .path = path, .dfd = dfd, .call = call };

	return stash_call(&c);
}

static __always_inline int exited(long ret)
{
	struct call c;

	if (!take_call(&c))
		return 0;
	return report(ret, c.call, c.dfd, c.path);
}

SEC("tracepoint/syscalls/sys_enter_newstat")
int stat_enter_stat(struct trace_event_raw_sys_enter *ctx)
{
	return entered(CALL_STAT, AT_FDCWD, (const char *)ctx->args[0]);
}

SEC("tracepoint/syscalls/sys_enter_newlstat")
int stat_enter_lstat(struct trace_event_raw_sys_enter *ctx)
{
	return entered(CALL_LSTAT, AT_FDCWD, (const char *)ctx->args[0]);
}

SEC("tracepoint/syscalls/sys_enter_statfs")
int stat_enter_statfs(struct trace_event_raw_sys_enter *ctx)
{
	return entered(CALL_STATFS, AT_FDCWD, (const char *)ctx->args[0]);
}

SEC("tracepoint/syscalls/sys_enter_newfstatat")
int stat_enter_newfstatat(struct trace_event_raw_sys_enter *ctx)
{
	return entered(CALL_NEWFSTATAT, ctx->args[0], (const char *)ctx->args[1]);
}

SEC("tracepoint/syscalls/sys_enter_statx")
int stat_enter_statx(struct trace_event_raw_sys_enter *ctx)
{
	return entered(CALL_STATX, ctx->args[0], (const char *)ctx->args[1]);
}

SEC("tracepoint/syscalls/sys_exit_newstat")
int stat_exit_stat(struct trace_event_raw_sys_exit *ctx)
{
	return exited(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_newlstat")
int stat_exit_lstat(struct trace_event_raw_sys_exit *ctx)
{
	return exited(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_statfs")
int stat_exit_statfs(struct trace_event_raw_sys_exit *ctx)
{
	return exited(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_newfstatat")
int stat_exit_newfstatat(struct trace_event_raw_sys_exit *ctx)
{
	return exited(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_statx")
int stat_exit_statx(struct trace_event_raw_sys_exit *ctx)
{
	return exited(ctx->ret);
}

char LICENSE[] SEC("license") = "GPL";
