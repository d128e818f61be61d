// SPDX-License-Identifier: GPL-2.0
/* threadsnoop: each new thread, when the kernel makes it (task_newtask,
 * in its creator's context, with CLONE_THREAD), so that every thread is
 * seen, however it was made (Go's runtime, a raw clone(), any libc); and
 * the function it starts in where the creator called pthread_create()
 * (a uprobe on it, by thread, taken at the task's creation: the clone
 * comes from the same thread). BCC's threadsnoop sees pthread_create()
 * calls alone, including those that fail. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "threadsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"

#ifndef CLONE_THREAD
#define CLONE_THREAD 0x00010000
#endif

struct event event_layout = {};

/* pthread_create's start routine, by the calling thread; LRU: a call
 * that fails before its clone leaves its entry, the next call of the
 * thread replaces it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} starting SEC(".maps");

SEC("uprobe")
int BPF_UPROBE(thread_create, void *thread, void *attr, void *start_routine)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 start = (__u64)start_routine;

	bpf_map_update_elem(&starting, &tid, &start, BPF_ANY);
	return 0;
}

static __always_inline int created(__u32 new_tid, __u64 clone_flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct event e;
	__u64 *start;

	if (!(clone_flags & CLONE_THREAD))
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	start = bpf_map_lookup_elem(&starting, &tid);
	if (start) {
		e.start = *start;
		bpf_map_delete_elem(&starting, &tid);
	}
	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	task_header_now(&e.task);
	e.clone_flags = clone_flags;
	e.new_tid = new_tid;
	emit(&e, sizeof(e));
	return 0;
}

SEC("tp_btf/task_newtask")
int BPF_PROG(new_btf, struct task_struct *task, __u64 clone_flags)
{
	return created(BPF_CORE_READ(task, pid), clone_flags);
}

SEC("raw_tp/task_newtask")
int BPF_PROG(new_raw, struct task_struct *task, __u64 clone_flags)
{
	return created(BPF_CORE_READ(task, pid), clone_flags);
}

SEC("tracepoint/task/task_newtask")
int new_tp(struct trace_event_raw_task_newtask *ctx)
{
	return created(ctx->pid, ctx->clone_flags);
}

char LICENSE[] SEC("license") = "GPL";
