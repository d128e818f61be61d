/* A stack tool that sums a value by process and stacks (profile's samples,
 * offcputime's nanoseconds): the stack map, the counts map, the -U/-K
 * switches, and the two steps every such tool takes: the stacks of the
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

/* The sums by key. Preallocated: a hardware perf event's program runs in
 * NMI context, where only preallocated hash maps may be updated. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct stack_key);
	__type(value, __u64);
} counts SEC(".maps");

/* The current task's stacks (`task` is current, of process `tgid`) into
 * `key`'s ids; returns the number of the user stack copy sent with
 * --unwind dwarf (0: none wanted, STACK_SEQ_LOST: it could not be sent). */
static __always_inline __u64 take_stacks(void *ctx, struct task_struct *task, __u32 tgid,
					 struct stack_key *key)
{
	__u64 ip, sp, bp, seq;

	key->kern_stack_id = kernel_stacks ? stack_id_or_none(ctx, &stackmap, 0) : -1;
	key->user_stack_id = -1;
	/* A kernel thread has no user stack: none, not missed. */
	if (!user_stacks || (BPF_CORE_READ(task, flags) & PF_KTHREAD))
		return 0;
	if (dwarf_unwind) {
		seq = STACK_SEQ_LOST;
		if (ustack_user_regs(task, &ip, &sp, &bp))
			seq = ustack_send(ip, sp, bp) ?: STACK_SEQ_LOST;
		return seq;
	}
	key->user_stack_id = stack_id(ctx, &stackmap, BPF_F_USER_STACK);
	note_process(tgid);
	return 0;
}

/* Adds `value` to `key`'s sum; with --unwind dwarf, sends it for the front
 * end to add, which holds the stack unwound from copy `seq`. */
static __always_inline void count_stacks(struct stack_key *key, __u64 seq, __u64 value)
{
	static const __u64 zero;
	struct stack_sample rec;
	__u64 *sum;

	if (dwarf_unwind) {
		rec.kind = STACK_SAMPLE_KIND;
		rec.tgid = key->tgid;
		rec.tid = key->tid;
		rec.kern_stack_id = key->kern_stack_id;
		rec.seq = seq;
		rec.value = value;
		__builtin_memcpy(rec.comm, key->comm, sizeof(rec.comm));
		rec.cgroup_id = key->cgroup_id;
		emit(&rec, sizeof(rec));
		return;
	}
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

#endif
