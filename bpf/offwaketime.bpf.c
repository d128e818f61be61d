// SPDX-License-Identifier: GPL-2.0
/* offwaketime: time tasks spend blocked, summed in the kernel by their
 * stacks joined with the stacks of the task that woke them. sched_switch
 * takes the stacks of the task going off CPU (current); sched_waking, in
 * the waker's context, takes the waker's (current again) for a task
 * followed; sched_switch charges the time, under both, when the task runs
 * again. sched_waking, not sched_wakeup: the latter may run on the
 * woken task's CPU, where current is not the waker.
 * Variants: tp_btf (task local storage) and raw_tp (a hash by tid). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "offwaketime.h"
#include "core_fixes.bpf.h"
#include "filters.bpf.h"
#include "maps.bpf.h"
#include "errors.bpf.h"
/* --unwind dwarf's records: 16 KiB copies at switch rates. */
#define RINGBUF_BYTES (16 << 20)
#define STACK_WAKERS
#include "stackcounts.bpf.h"
#include "task.bpf.h"
#include "offcpu.bpf.h"

/* A task off CPU: since when, its stacks, and (once woken) its waker's.
 * --unwind dwarf: `seq` and `waker_seq` number the user stack copies. */
struct ow_start {
	__u64 ts;
	__u64 seq;
	__u64 waker_seq;
	__s32 user_stack_id;
	__s32 kern_stack_id;
	struct stack_waker waker;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct ow_start);
} start_storage SEC(".maps");

/* An entry lives as long as its task (it keeps the waker that may come
 * before the switch-out): LRU, so that exited tasks' go. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct ow_start);
} start SEC(".maps");

/* Zeroed, for a task's fresh start (too large to build on the stack
 * beside the key). */
static const struct ow_start empty_start;

static __always_inline struct ow_start *start_of(struct task_struct *t, __u32 tid, bool btf,
						 bool create)
{
	if (btf)
		return bpf_task_storage_get(&start_storage, t, 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (create && bpf_map_update_elem(&start, &tid, &empty_start, BPF_ANY))
		return NULL;
	return bpf_map_lookup_elem(&start, &tid);
}

static __always_inline void forget_waker(struct ow_start *s)
{
	__builtin_memset(&s->waker, 0, sizeof(s->waker));
	s->waker.user_stack_id = -1;
	s->waker.kern_stack_id = -1;
	s->waker_seq = 0;
}

static __always_inline int on_switch(void *ctx, bool preempt, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	__u32 tid = BPF_CORE_READ(prev, pid), tgid = BPF_CORE_READ(prev, tgid);
	struct ow_start *s;
	struct wake_key key = {};
	__u64 now = bpf_ktime_get_ns(), delta, seq, waker_seq;

	/* prev goes off CPU: its stacks are current's. Its waker may be in
	 * already: sched_waking runs on the waker's CPU as soon as prev is
	 * dequeued, before this tracepoint. A task preempted (runnable) has
	 * none coming. */
	if (offcpu_allowed(prev, tid, tgid)) {
		s = start_of(prev, tid, btf, true);
		if (s) {
			s->seq = take_stacks(ctx, prev, tgid, &key.target);
			s->kern_stack_id = key.target.kern_stack_id;
			s->user_stack_id = key.target.user_stack_id;
			if (preempt || task_state(prev) == TASK_RUNNING)
				forget_waker(s);
			s->ts = now;
		}
	}

	/* next comes back: charge its time off CPU. */
	tid = BPF_CORE_READ(next, pid);
	s = start_of(next, tid, btf, false);
	if (!s || !s->ts)
		return 0;
	delta = now - s->ts;
	key.target.user_stack_id = s->user_stack_id;
	key.target.kern_stack_id = s->kern_stack_id;
	key.waker = s->waker;
	seq = s->seq;
	waker_seq = s->waker_seq;
	/* Running: a waker from now on is for its next block. */
	s->ts = 0;
	forget_waker(s);
	if (!block_counts(delta))
		return 0;
	key.target.tid = tid;
	key.target.tgid = BPF_CORE_READ(next, tgid);
	BPF_CORE_READ_STR_INTO(&key.target.comm, next, comm);
	if (per_container)
		key.target.cgroup_id = task_cgroup_id(next);
	count_wake(&key, seq, waker_seq, delta);
	return 0;
}

/* p is being woken by current: if p is followed, current's stacks are
 * the waker's of its block (going on, or about to be charged: see
 * on_switch). */
static __always_inline int on_waking(void *ctx, struct task_struct *p, bool btf)
{
	struct task_struct *waker = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = BPF_CORE_READ(p, pid);
	struct stack_waker w = {};
	struct ow_start *s;
	__u64 seq;

	s = start_of(p, tid, btf, false);
	if (!s)
		return 0;
	w.tgid = id >> 32;
	w.tid = (__u32)id;
	bpf_get_current_comm(&w.comm, sizeof(w.comm));
	seq = take_stacks_as(ctx, waker, w.tgid, &w.kern_stack_id, &w.user_stack_id,
			     USTACK_WAKER_KIND, tid);
	s->waker = w;
	s->waker_seq = seq;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(ow_btf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, true);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(ow_btf_waking, struct task_struct *p)
{
	return on_waking(ctx, p, true);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(ow_raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, preempt, prev, next, false);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(ow_raw_waking, struct task_struct *p)
{
	return on_waking(ctx, p, false);
}

/* Keeps the error enum in BTF for the front end. */
enum ow_error ow_error_btf;

char LICENSE[] SEC("license") = "GPL";
