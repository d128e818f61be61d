// SPDX-License-Identifier: GPL-2.0
/* execsnoop: one event per exec, argv read at syscall entry (the old image's
 * memory is gone once a successful exec returns), emitted at exit with the
 * result. Covers execve and execveat (fexecve, container runtimes).
 * Two variants, the front end loads one. Where tp_btf exists and failed
 * execs are not asked for (-x), one program on sched_process_exec reads the
 * arguments from the new image, where the kernel copied them: nothing runs
 * on other syscalls, and it detaches at once. Otherwise the syscalls:*
 * tracepoints, whose every exec is seen, failed or not. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "execsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"

const volatile bool include_failed = false;
const volatile __u32 filter_ppid = 0;
const volatile __u32 max_args = DEFAULT_MAX_ARGS;

static const struct event empty_event = {};

/* In-flight execs, keyed by tgid: a successful exec from a non-leader thread
 * returns with the leader's tid, but the tgid never changes. Not
 * preallocated: the value is 8 KiB and few execs are in flight at once. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct event);
} execs SEC(".maps");

/* The argument loop is its own program, reached by tail call from both
 * entry programs, so the verifier checks it once: half the load time. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} read_args SEC(".maps");

/* argv of the exec being entered on this CPU, for exec_read_args. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pending_argv SEC(".maps");

static __always_inline int exec_enter(void *ctx, const char *const *argv)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, uid = (__u32)bpf_get_current_uid_gid(), zero = 0, ppid;
	struct task_struct *task;
	struct event *e;
	__u64 *pending;

	if (!uid_allowed(uid) || !cgroup_allowed())
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	ppid = BPF_CORE_READ(task, real_parent, tgid);
	if (filter_ppid && ppid != filter_ppid)
		return 0;

	if (bpf_map_update_elem(&execs, &tgid, &empty_event, BPF_ANY))
		return 0;
	e = bpf_map_lookup_elem(&execs, &tgid);
	if (!e)
		return 0;
	e->ppid = ppid;
	e->uid = uid;

	pending = bpf_map_lookup_elem(&pending_argv, &zero);
	if (!pending)
		return 0;
	*pending = (__u64)argv;
	bpf_tail_call(ctx, &read_args, 0);
	return 0;
}

static __always_inline int read_argv(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, zero = 0, size = 0;
	const char *const *argv;
	const char *argp;
	struct event *e;
	__u64 *pending;
	int i;

	pending = bpf_map_lookup_elem(&pending_argv, &zero);
	e = bpf_map_lookup_elem(&execs, &tgid);
	if (!pending || !e)
		return 0;
	argv = (const char *const *)*pending;
	for (i = 0; i < TOTAL_MAX_ARGS && i < max_args; i++) {
		long len;

		argp = 0;
		if (bpf_probe_read_user(&argp, sizeof(argp), &argv[i]) || !argp)
			goto done;
		if (size > LAST_ARG) {
			e->truncated = 1;
			goto done;
		}
		len = bpf_probe_read_user_str(&e->args[size], ARGSIZE, argp);
		if (len < 0)
			goto done;
		/* Older kernels' strncpy_from_user_nofault (6.1's among them)
		 * read an empty string as 0 bytes, not 1: still an argument. */
		if (len == 0) {
			e->args[size] = 0;
			len = 1;
		}
		if (len == ARGSIZE) /* cut, or exactly ARGSIZE - 1 long */
			e->truncated = 1;
		/* A no-op mask (size + len <= FULL_MAX_ARGS_ARR < 8192) that gives
		 * size the same range on every iteration, so the verifier prunes
		 * the loop's states instead of walking each one: faster start. */
		size = (size + len) & 8191;
	}
	/* Stopped at the limit: say so when there was more. */
	argp = 0;
	if (!bpf_probe_read_user(&argp, sizeof(argp), &argv[i]) && argp)
		e->truncated = 1;
done:
	e->args_size = size;
	return 0;
}

/* Tail call targets are of their caller's program type: one each. */
SEC("tracepoint")
int exec_read_args(void *ctx)
{
	return read_argv();
}

static __always_inline int exec_exit(long ret)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct task_struct *task;
	struct event *e;
	__u64 len;

	e = bpf_map_lookup_elem(&execs, &tgid);
	if (!e)
		return 0;
	if (ret < 0 && !include_failed)
		goto cleanup;
	e->retval = ret;
	task_header_now(&e->task);
	e->cpu = bpf_get_smp_processor_id();
	task = (struct task_struct *)bpf_get_current_task();
	BPF_CORE_READ_STR_INTO(&e->pcomm, task, real_parent, comm);
	len = __builtin_offsetof(struct event, args) + e->args_size;
	if (len <= sizeof(*e))
		emit(e, len);
cleanup:
	bpf_map_delete_elem(&execs, &tgid);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_execve")
int execve_enter(struct trace_event_raw_sys_enter *ctx)
{
	return exec_enter(ctx, (const char *const *)ctx->args[1]);
}

SEC("tracepoint/syscalls/sys_exit_execve")
int execve_exit(struct trace_event_raw_sys_exit *ctx)
{
	return exec_exit(ctx->ret);
}

/* execveat(dfd, filename, argv, envp, flags) */
SEC("tracepoint/syscalls/sys_enter_execveat")
int execveat_enter(struct trace_event_raw_sys_enter *ctx)
{
	return exec_enter(ctx, (const char *const *)ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_exit_execveat")
int execveat_exit(struct trace_event_raw_sys_exit *ctx)
{
	return exec_exit(ctx->ret);
}

/* The event is built here: it is too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct event);
} scratch SEC(".maps");

/* A successful exec, in the new image: its arguments are the block
 * [arg_start, arg_end) of NUL-terminated strings the kernel copied onto
 * the new stack. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_btf_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 uid = (__u32)bpf_get_current_uid_gid(), zero = 0, ppid;
	unsigned long start, len;
	struct mm_struct *mm;
	struct event *e;

	if (!uid_allowed(uid) || !cgroup_allowed())
		return 0;
	ppid = BPF_CORE_READ(p, real_parent, tgid);
	if (filter_ppid && ppid != filter_ppid)
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	task_header_now(&e->task);
	e->ppid = ppid;
	e->uid = uid;
	e->cpu = bpf_get_smp_processor_id();
	e->retval = 0;
	e->truncated = 0;
	BPF_CORE_READ_STR_INTO(&e->pcomm, p, real_parent, comm);
	mm = BPF_CORE_READ(p, mm);
	start = BPF_CORE_READ(mm, arg_start);
	len = BPF_CORE_READ(mm, arg_end) - start;
	if (len > sizeof(e->args)) {
		len = sizeof(e->args);
		e->truncated = 1;
	}
	if (!len || bpf_probe_read_user(e->args, len, (void *)start))
		len = 0;
	e->args_size = len;
	emit(e, __builtin_offsetof(struct event, args) + len);
	return 0;
}

/* Keeps the limits in BTF for the front end. */
enum execsnoop_limits execsnoop_limits_btf;

char LICENSE[] SEC("license") = "GPL";
