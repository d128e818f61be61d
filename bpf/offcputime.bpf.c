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
#include "stacks.bpf.h"
#include "seenpids.bpf.h"
/* --unwind dwarf's records: 16 KiB copies at switch rates. */
#define RINGBUF_BYTES (16 << 20)
#include "ustack.bpf.h"

#define PF_KTHREAD 0x00200000

const volatile bool user_threads_only = false;
const volatile bool kernel_threads_only = false;
const volatile bool user_stacks = true;
const volatile bool kernel_stacks = true;
const volatile bool filter_state = false;
/* With filter_state: 0 means "runnable" (preempted), else a state mask. */
const volatile long state_mask = 0;
const volatile __u64 min_block_ns = 1000;
const volatile __u64 max_block_ns = (__u64)-1;

struct oc_start {
	__u64 ts;
	__s32 user_stack_id;
	__s32 kern_stack_id;
	/* --unwind dwarf: the user stack copy's number (struct oc_delta). */
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

STACK_MAP(stackmap);

/* Off-CPU time in nanoseconds by thread and stacks. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct oc_key);
	__type(value, __u64);
} info SEC(".maps");

static __always_inline bool allowed(struct task_struct *t, __u32 tid, __u32 tgid)
{
	bool kthread;
	long state;

	if (!tid || !not_self(tgid))
		return false;
	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &tgid))
		return false;
	if (filter_tids && !bpf_map_lookup_elem(&tid_filter, &tid))
		return false;
	if (user_threads_only || kernel_threads_only) {
		kthread = BPF_CORE_READ(t, flags) & PF_KTHREAD;
		if (user_threads_only && kthread)
			return false;
		if (kernel_threads_only && !kthread)
			return false;
	}
	if (filter_state) {
		state = task_state(t);
		if (state_mask ? !(state & state_mask) : state != 0)
			return false;
	}
	return true;
}

static __always_inline int on_switch(void *ctx, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	__u32 tid = BPF_CORE_READ(prev, pid), tgid = BPF_CORE_READ(prev, tgid);
	struct oc_start *s, fresh;
	struct oc_key key;
	struct oc_delta rec;
	__u64 now = bpf_ktime_get_ns(), delta, *total, ip, sp, bp;

	/* prev goes off CPU: its stacks are current's. */
	if (allowed(prev, tid, tgid)) {
		fresh.ts = now;
		fresh.kern_stack_id = -1;
		fresh.user_stack_id = -1;
		fresh.seq = 0;
		if (kernel_stacks) {
			fresh.kern_stack_id = stack_id(ctx, &stackmap, 0);
		}
		/* A kernel thread has no user stack (EFAULT), which is no error. */
		if (user_stacks && !(BPF_CORE_READ(prev, flags) & PF_KTHREAD) && dwarf_unwind) {
			fresh.seq = OC_SEQ_LOST;
			if (ustack_user_regs(prev, &ip, &sp, &bp))
				fresh.seq = ustack_send(ip, sp, bp) ?: OC_SEQ_LOST;
		} else if (user_stacks && !(BPF_CORE_READ(prev, flags) & PF_KTHREAD)) {
			fresh.user_stack_id = stack_id(ctx, &stackmap, BPF_F_USER_STACK);
			note_process(tgid);
		}
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
	rec.seq = s->seq;
	if (btf)
		s->ts = 0;
	else
		bpf_map_delete_elem(&start, &tid);
	if ((__s64)delta < 0 || delta < min_block_ns || delta > max_block_ns)
		return 0;
	if (dwarf_unwind) {
		/* Summed by the front end, which holds the unwound stack. */
		rec.kind = OC_DELTA_KIND;
		rec.tid = tid;
		rec.tgid = BPF_CORE_READ(next, tgid);
		rec.kern_stack_id = key.kern_stack_id;
		rec.delta_ns = delta;
		BPF_CORE_READ_STR_INTO(&rec.comm, next, comm);
		emit(&rec, sizeof(rec));
		return 0;
	}
	key.tid = tid;
	key.tgid = BPF_CORE_READ(next, tgid);
	BPF_CORE_READ_STR_INTO(&key.comm, next, comm);
	total = bpf_map_lookup_elem(&info, &key);
	if (!total) {
		static const __u64 zero;

		total = lookup_or_try_init(&info, &key, &zero);
		if (!total) {
			count_error(ERR_INFO_FULL);
			return 0;
		}
	}
	__sync_fetch_and_add(total, delta);
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

enum stack_limits stack_limits_btf;
enum oc_record_kind oc_record_kind_btf;
struct oc_delta oc_delta_layout;

char LICENSE[] SEC("license") = "GPL";
