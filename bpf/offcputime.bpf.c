// SPDX-License-Identifier: GPL-2.0
/* offcputime: time tasks spend blocked (off CPU), summed in the kernel by
 * stack. sched_switch takes the stacks while `current` is still the task
 * going off CPU, and charges the time when the task runs again.
 * Variants: tp_btf (task local storage) and raw_tp (a hash by tid). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "offcputime.h"
#include "core_fixes.bpf.h"
#include "filters.bpf.h"
#include "maps.bpf.h"
#include "errors.bpf.h"
/* --unwind dwarf's records: 16 KiB copies at switch rates. */
#define RINGBUF_BYTES (16 << 20)
#include "stackcounts.bpf.h"
#include "task.bpf.h"
#include "offcpu.bpf.h"

/* A task off CPU: since when, and the stacks it left with. */
struct oc_start {
	__u64 ts;
	__s32 user_stack_id;
	__s32 kern_stack_id;
	/* --unwind dwarf: the user stack copy's number (take_stacks). */
	__u64 seq;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct oc_start);
} start_storage SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, struct oc_start);
} start SEC(".maps");

static __always_inline int on_switch(void *ctx, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	__u32 tid = BPF_CORE_READ(prev, pid), tgid = BPF_CORE_READ(prev, tgid);
	struct oc_start *s, fresh;
	struct stack_key key;
	__u64 now = bpf_ktime_get_ns(), delta, seq;

	/* prev goes off CPU: its stacks are current's. */
	if (offcpu_allowed(prev, tid, tgid)) {
		fresh.ts = now;
		fresh.seq = take_stacks(ctx, prev, tgid, &key);
		fresh.kern_stack_id = key.kern_stack_id;
		fresh.user_stack_id = key.user_stack_id;
		if (btf) {
			s = bpf_task_storage_get(&start_storage, prev, 0,
						 BPF_LOCAL_STORAGE_GET_F_CREATE);
			if (s)
				*s = fresh;
		} else {
			bpf_map_update_elem(&start, &tid, &fresh, BPF_ANY);
		}
	}

	/* next comes back: charge its time off CPU. */
	tid = BPF_CORE_READ(next, pid);
	if (btf) {
		s = bpf_task_storage_get(&start_storage, next, 0, 0);
	} else {
		s = bpf_map_lookup_elem(&start, &tid);
	}
	if (!s || !s->ts)
		return 0;
	delta = now - s->ts;
	__builtin_memset(&key, 0, sizeof(key));
	key.user_stack_id = s->user_stack_id;
	key.kern_stack_id = s->kern_stack_id;
	seq = s->seq;
	if (btf)
		s->ts = 0;
	else
		bpf_map_delete_elem(&start, &tid);
	if (!block_counts(delta))
		return 0;
	key.tid = tid;
	key.tgid = BPF_CORE_READ(next, tgid);
	BPF_CORE_READ_STR_INTO(&key.comm, next, comm);
	if (per_container)
		key.cgroup_id = task_cgroup_id(next);
	count_stacks(&key, seq, delta);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(oc_btf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, prev, next, true);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(oc_raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(ctx, prev, next, false);
}

/* Keeps the error enum in BTF for the front end. */
enum oc_error oc_error_btf;

char LICENSE[] SEC("license") = "GPL";
