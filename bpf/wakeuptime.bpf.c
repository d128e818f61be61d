// SPDX-License-Identifier: GPL-2.0
/* wakeuptime: time tasks spend blocked, from sleep to wakeup, summed in
 * the kernel by the stacks of the task that woke them. sched_switch notes
 * when a followed task goes off CPU; sched_waking, in the waker's context,
 * charges the time to current's stacks. sched_waking, not sched_wakeup:
 * the latter may run on the woken task's CPU, where current is not the
 * waker.
 * Variants: tp_btf (task local storage) and raw_tp (a hash by tid). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "wakeuptime.h"
#include "core_fixes.bpf.h"
#include "filters.bpf.h"
#include "maps.bpf.h"
#include "errors.bpf.h"
/* --unwind dwarf's records: 16 KiB copies at wakeup rates. */
#define RINGBUF_BYTES (16 << 20)
#define STACK_WAKERS
#include "stackcounts.bpf.h"
#include "task.bpf.h"
#include "offcpu.bpf.h"

TASK_START_MAPS();

static __always_inline int on_switch(struct task_struct *prev, struct task_struct *next,
				     bool btf)
{
	__u32 tid = BPF_CORE_READ(next, pid), tgid;
	__u64 now, *ts;

	/* next runs: a time left by a wakeup that came before its switch-out
	 * (sched_waking may run as soon as it is dequeued), or by a
	 * preemption, must not be charged to a later wakeup. */
	if (btf) {
		ts = bpf_task_storage_get(&start_storage, next, 0, 0);
		if (ts)
			*ts = 0;
	} else {
		bpf_map_delete_elem(&start, &tid);
	}
	tid = BPF_CORE_READ(prev, pid);
	tgid = BPF_CORE_READ(prev, tgid);
	if (!offcpu_allowed(prev, tid, tgid))
		return 0;
	now = bpf_ktime_get_ns();
	if (btf) {
		ts = bpf_task_storage_get(&start_storage, prev, 0,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (ts)
			*ts = now;
	} else {
		bpf_map_update_elem(&start, &tid, &now, BPF_ANY);
	}
	return 0;
}

/* p is being woken by current: its time asleep goes to current's stacks. */
static __always_inline int on_waking(void *ctx, struct task_struct *p, bool btf)
{
	struct task_struct *waker = (struct task_struct *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid(), delta, seq, *ts;
	__u32 tid = BPF_CORE_READ(p, pid);
	struct wake_key key = {};

	if (btf) {
		ts = bpf_task_storage_get(&start_storage, p, 0, 0);
	} else {
		ts = bpf_map_lookup_elem(&start, &tid);
	}
	if (!ts || !*ts)
		return 0;
	delta = bpf_ktime_get_ns() - *ts;
	if (btf)
		*ts = 0;
	else
		bpf_map_delete_elem(&start, &tid);
	if (!block_counts(delta))
		return 0;
	/* By process, as BCC's by name: the woken process and the waker's. */
	key.target.tgid = BPF_CORE_READ(p, tgid);
	key.target.user_stack_id = -1;
	key.target.kern_stack_id = -1;
	BPF_CORE_READ_STR_INTO(&key.target.comm, p, comm);
	if (per_container)
		key.target.cgroup_id = task_cgroup_id(p);
	key.waker.tgid = id >> 32;
	bpf_get_current_comm(&key.waker.comm, sizeof(key.waker.comm));
	seq = take_stacks_as(ctx, waker, key.waker.tgid, &key.waker.kern_stack_id,
			     &key.waker.user_stack_id, USTACK_WAKER_KIND, tid);
	count_wake(&key, 0, seq, delta);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(wu_btf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next, true);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(wu_btf_waking, struct task_struct *p)
{
	return on_waking(ctx, p, true);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(wu_raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(prev, next, false);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(wu_raw_waking, struct task_struct *p)
{
	return on_waking(ctx, p, false);
}

/* Keeps the error enum in BTF for the front end. */
enum wu_error wu_error_btf;

char LICENSE[] SEC("license") = "GPL";
