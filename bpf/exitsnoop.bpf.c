// SPDX-License-Identifier: GPL-2.0
/* exitsnoop: each process's exit (or each thread's), from
 * sched:sched_process_exit, which runs in the exiting task after the
 * kernel set its exit_code. A process's exit is its last thread's: the one
 * that found no thread of its group left alive (signal->live at 0), not the
 * main thread's, which may end long before the others (BCC and
 * libbpf-tools report the main thread's). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "exitsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"

/* Set by the front end: every thread's exit (--per-thread, -T); only
 * exits with a nonzero code or a signal (-x). */
const volatile bool per_thread = false;
const volatile bool failed_only = false;

struct event event_layout = {};

static __always_inline int exited(struct task_struct *t)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct event e;
	__u64 start;
	__u32 code;

	if (!per_thread && BPF_CORE_READ(t, signal, live.counter) != 0)
		return 0;
	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	code = BPF_CORE_READ(t, exit_code);
	if (failed_only && !code)
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	task_header_now(&e.task);
	e.exit_code = code;
	e.ppid = BPF_CORE_READ(t, real_parent, tgid);
	start = per_thread ? BPF_CORE_READ(t, start_time)
			   : BPF_CORE_READ(t, group_leader, start_time);
	e.age_ns = e.task.ts_ns > start ? e.task.ts_ns - start : 0;
	emit(&e, sizeof(e));
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_btf, struct task_struct *p)
{
	return exited(p);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(exit_raw, struct task_struct *p)
{
	return exited(p);
}

/* The classic tracepoint's record has no task pointer: the exiting task is
 * the current one. */
SEC("tracepoint/sched/sched_process_exit")
int exit_tp(void *ctx)
{
	return exited((struct task_struct *)bpf_get_current_task());
}

char LICENSE[] SEC("license") = "GPL";
