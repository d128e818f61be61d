/* --unwind dwarf: the user registers and a copy of the top of the user
 * stack, sent through the `events` ring buffer (events.bpf.h) for the front
 * end to unwind with the binaries' .eh_frame (common::unwind, which reads
 * struct ustack_header of ustack.h). Frame pointer walks in the
 * kernel stop at the first function built without them; a copy does not
 * depend on them. x86_64 only. */
#ifndef __USTACK_BPF_H
#define __USTACK_BPF_H

#include "events.bpf.h"
#include "ustack.h"

const volatile bool dwarf_unwind = false;
/* Bytes copied from the stack pointer up; a multiple of 8, at most USTACK_MAX. */
const volatile __u32 stack_copy_size = 16384;

struct ustack_event {
	struct ustack_header h;
	/* One page more than the most copied, so that the verifier can see
	 * each page's copy fit. */
	__u8 data[USTACK_MAX + USTACK_PAGE];
};

/* Too large for the stack or a per-CPU value (32 KiB): one slot per CPU,
 * sized by the front end. A tracing program does not migrate, and these
 * hooks do not nest on one CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack_event);
} ustack_scratch SEC(".maps");

/* Copies the stack above `sp`, a page at a time, stopping at the first
 * page that cannot be read (the stack's end, or not resident). */
static __always_inline __u32 ustack_copy(struct ustack_event *e, __u64 sp)
{
	/* 64-bit arithmetic throughout: the verifier then sees the bounds
	 * checked on the very registers passed to the helper. */
	__u64 len = 0, n, want = stack_copy_size, addr = sp;

	for (int i = 0; i < USTACK_MAX / USTACK_PAGE + 1; i++) {
		if (len >= want || len > USTACK_MAX)
			break;
		n = USTACK_PAGE - (addr & (USTACK_PAGE - 1));
		if (n > want - len)
			n = want - len;
		n &= 2 * USTACK_PAGE - 1;
		if (!n || n > USTACK_PAGE)
			break;
		if (bpf_probe_read_user(&e->data[len], n, (void *)addr))
			break;
		len += n;
		addr += n;
	}
	return len;
}

/* Sends a copy of the current task's user stack from these registers, a
 * record of `kind` for thread `tid` (ustack.h); returns its number, or 0
 * when it could not be sent (counted as lost). */
static __always_inline __u64 ustack_send_for(__u64 ip, __u64 sp, __u64 bp, __u32 kind,
					     __u32 tid)
{
	__u32 cpu = bpf_get_smp_processor_id(), len;
	__u64 id = bpf_get_current_pid_tgid();
	struct ustack_event *e = bpf_map_lookup_elem(&ustack_scratch, &cpu);

	if (!e) {
		count_lost();
		return 0;
	}
	e->h.kind = kind;
	e->h.tid = tid;
	e->h.tgid = id >> 32;
	/* Numbers each copy, unique across CPUs: a per-CPU count (the slot
	 * keeps the last) above the CPU's number. Never 0, which later records
	 * use for "no copy". (A shared atomic counter would need fetch-add,
	 * 5.12+.) */
	e->h.seq = (((e->h.seq >> 12) + 1) << 12) | (cpu & 0xfff);
	e->h.ip = ip;
	e->h.sp = sp;
	e->h.bp = bp;
	len = ustack_copy(e, sp);
	if (len > USTACK_MAX)
		len = USTACK_MAX;
	e->h.len = len;
	if (bpf_ringbuf_output(&events, e, offsetof(struct ustack_event, data) + len,
			       wakeup_flag())) {
		count_lost();
		return 0;
	}
	return e->h.seq;
}

/* ustack_send_for the current thread's own later record. */
static __always_inline __u64 ustack_send(__u64 ip, __u64 sp, __u64 bp)
{
	return ustack_send_for(ip, sp, bp, USTACK_KIND, (__u32)bpf_get_current_pid_tgid());
}

/* The user registers of the current task from a tracepoint in the kernel:
 * the pt_regs at the top of its kernel stack. */
static __always_inline bool ustack_user_regs(struct task_struct *task, __u64 *ip, __u64 *sp,
					     __u64 *bp)
{
	struct pt_regs *regs;

	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs)) {
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	} else {
		/* Before 5.15: task_pt_regs() by hand (x86_64: no padding at
		 * the top of a THREAD_SIZE of 16 KiB). */
		void *stack = BPF_CORE_READ(task, stack);

		if (!stack)
			return false;
		regs = (struct pt_regs *)(stack + 16384) - 1;
	}
	*ip = BPF_CORE_READ(regs, ip);
	*sp = BPF_CORE_READ(regs, sp);
	*bp = BPF_CORE_READ(regs, bp);
	return *sp != 0;
}

#endif
