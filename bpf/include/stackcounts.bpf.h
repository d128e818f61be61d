/* A stack tool that sums a value by process and stacks (profile's samples,
 * offcputime's nanoseconds; offwaketime's with its waker's): the stack
 * map, the counts map, the -U/-K switches, and the two steps every such tool takes: the stacks of the
 * current task, then a value added to them. With --unwind dwarf the user
 * stack is a copy sent to the front end, and so is the value; the front
 * end (common::kinds::stack) sets the globals, sizes the maps and reads
 * them. Include errors.bpf.h first, and define RINGBUF_BYTES for the
 * copies. */
#ifndef __STACKCOUNTS_BPF_H
#define __STACKCOUNTS_BPF_H

#include "stacks.bpf.h"
#include "seenpids.bpf.h"
#include "ustack.bpf.h"

#ifndef PF_KTHREAD
#define PF_KTHREAD 0x00200000
#endif

const volatile bool user_stacks = true;
const volatile bool kernel_stacks = true;
/* --containers: keys carry the task's cgroup. */
const volatile bool per_container = false;

STACK_MAP(stackmap);

/* The sums by key: struct stack_key's, or with STACK_WAKERS defined
 * before the include (offwaketime, wakeuptime) struct wake_key's.
 * Preallocated: a hardware perf event's program runs in NMI context,
 * where only preallocated hash maps may be updated. */
#ifdef STACK_WAKERS
#define STACK_COUNT_KEY struct wake_key
#else
#define STACK_COUNT_KEY struct stack_key
#endif
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, STACK_COUNT_KEY);
	__type(value, __u64);
} counts SEC(".maps");

/* The current task's stacks (`task` is current, of process `tgid`) into
 * `kern` and `user`; returns the number of the user stack copy sent with
 * --unwind dwarf, a record of `kind` for thread `tid` (ustack.h) (0: none
 * wanted, STACK_SEQ_LOST: it could not be sent). */
static __always_inline __u64 take_stacks_as(void *ctx, struct task_struct *task, __u32 tgid,
					    __s32 *kern, __s32 *user, __u32 kind, __u32 tid)
{
	__u64 ip, sp, bp, seq;

	*kern = kernel_stacks ? stack_id_or_none(ctx, &stackmap, 0) : -1;
	*user = -1;
	/* A kernel thread has no user stack: none, not missed. */
	if (!user_stacks || (BPF_CORE_READ(task, flags) & PF_KTHREAD))
		return 0;
	if (dwarf_unwind) {
		seq = STACK_SEQ_LOST;
		if (ustack_user_regs(task, &ip, &sp, &bp))
			seq = ustack_send_for(ip, sp, bp, kind, tid) ?: STACK_SEQ_LOST;
		return seq;
	}
	*user = stack_id(ctx, &stackmap, BPF_F_USER_STACK);
	note_process(tgid);
	return 0;
}

/* The current task's stacks into `key`'s ids (take_stacks_as, the copy for
 * the task's own later record). */
static __always_inline __u64 take_stacks(void *ctx, struct task_struct *task, __u32 tgid,
					 struct stack_key *key)
{
	return take_stacks_as(ctx, task, tgid, &key->kern_stack_id, &key->user_stack_id,
			      USTACK_KIND, BPF_CORE_READ(task, pid));
}

/* Adds `value` to the sum of `key` (a STACK_COUNT_KEY). */
static __always_inline void add_to_counts(void *key, __u64 value)
{
	static const __u64 zero;
	__u64 *sum;

	sum = bpf_map_lookup_elem(&counts, key);
	if (!sum) {
		sum = lookup_or_try_init(&counts, key, &zero);
		if (!sum) {
			count_error(ERR_STACK_COUNTS_FULL);
			return;
		}
	}
	__sync_fetch_and_add(sum, value);
}

/* --unwind dwarf: `key`'s value (and its waker's, or NULL) sent for the
 * front end to add, which holds the stacks unwound from copies `seq` and
 * `waker_seq`. */
static __always_inline void send_sample(struct stack_key *key, __u64 seq,
					struct stack_waker *waker, __u64 waker_seq,
					__u64 value)
{
	struct stack_sample rec = {};

	rec.kind = STACK_SAMPLE_KIND;
	rec.tgid = key->tgid;
	rec.tid = key->tid;
	rec.kern_stack_id = key->kern_stack_id;
	rec.seq = seq;
	rec.value = value;
	__builtin_memcpy(rec.comm, key->comm, sizeof(rec.comm));
	rec.cgroup_id = key->cgroup_id;
	if (waker) {
		rec.waker = *waker;
		rec.waker_seq = waker_seq;
	}
	emit(&rec, sizeof(rec));
}

#ifdef STACK_WAKERS
/* Adds `value` to `key`'s sum; with --unwind dwarf, sends it (the woken
 * task's user stack copy `seq`, the waker's `waker_seq`). */
static __always_inline void count_wake(struct wake_key *key, __u64 seq, __u64 waker_seq,
				       __u64 value)
{
	if (dwarf_unwind)
		send_sample(&key->target, seq, &key->waker, waker_seq, value);
	else
		add_to_counts(key, value);
}
#else
/* Adds `value` to `key`'s sum; with --unwind dwarf, sends it for the front
 * end to add, which holds the stack unwound from copy `seq`. */
static __always_inline void count_stacks(struct stack_key *key, __u64 seq, __u64 value)
{
	if (dwarf_unwind)
		send_sample(key, seq, NULL, 0, value);
	else
		add_to_counts(key, value);
}
#endif

#endif
