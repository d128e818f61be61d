// SPDX-License-Identifier: GPL-2.0
/* stackcount: each hit of the probed points (user functions, USDT probes,
 * tracepoints, kernel functions) counts one for its process and stacks
 * (stackcounts.bpf.h), in the kernel, or with --unwind dwarf in the front
 * end, which unwinds the user stack's copy. One program per kind of hook,
 * attached to every point of that kind: the stacks say where, so no
 * cookie is needed. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
/* Its maps, which libbpf's USDT attachment needs. */
#include <bpf/usdt.bpf.h>
#include "stackcount.h"
#include "filters.bpf.h"
#include "maps.bpf.h"
#include "errors.bpf.h"
#include "syscall_points.bpf.h"
/* --unwind dwarf's copies. */
#define RINGBUF_BYTES (8 << 20)
#include "stackcounts.bpf.h"

/* -c: only hits on this CPU; -1 any. */
const volatile __s32 only_cpu = -1;
/* -p with only uprobes and USDT probes: they are placed in that process
 * alone. */
const volatile bool placed_in_pid = false;

/* Entry probes of user functions go past the frame setup where there is
 * one (the front end's plan); at a function without one the probe stays
 * at the entry, where the caller's return address is on top of the stack
 * and %rbp is still the caller's: the walk would skip the caller. */
const volatile bool entry_callers = false;

/* The return address on top of the user stack, where a uprobe is at a
 * function's first instruction: there %rbp (the caller's frame, above)
 * differs from %rsp, which equals it past a frame setup. */
static __always_inline __u64 entry_caller(struct pt_regs *regs)
{
	__u64 sp = PT_REGS_SP(regs), ret = 0;

	if (PT_REGS_FP(regs) == sp || bpf_probe_read_user(&ret, sizeof(ret), (void *)sp))
		return 0;
	return ret;
}

static __always_inline int hit(void *ctx, bool uprobe)
{
	__u64 id = bpf_get_current_pid_tgid(), seq;
	__u32 pid = id >> 32;
	struct stack_key key;

	if ((!placed_in_pid && !task_allowed(id)) || !cgroup_allowed())
		return 0;
	if (only_cpu >= 0 && bpf_get_smp_processor_id() != (__u32)only_cpu)
		return 0;
	__builtin_memset(&key, 0, sizeof(key));
	key.tgid = pid;
	bpf_get_current_comm(&key.comm, sizeof(key.comm));
	if (per_container)
		key.cgroup_id = bpf_get_current_cgroup_id();
	seq = take_stacks(ctx, (struct task_struct *)bpf_get_current_task(), pid, &key);
	if (uprobe && entry_callers && key.user_stack_id >= 0)
		key.entry_caller = entry_caller(ctx);
	count_stacks(&key, seq, 1);
	return 0;
}

SEC("uprobe.multi")
int sc_umulti(struct pt_regs *ctx)
{
	return hit(ctx, true);
}

SEC("uprobe")
int sc_uprobe(struct pt_regs *ctx)
{
	return hit(ctx, true);
}

SEC("usdt")
int sc_usdt(struct pt_regs *ctx)
{
	return hit(ctx, false);
}

SEC("tracepoint")
int sc_tp(void *ctx)
{
	return hit(ctx, false);
}

/* syscalls:* points: one program at each raw tracepoint, for the calls
 * traced. */
SEC("raw_tp/sys_enter")
int sc_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	return entered_point(ctx) ? hit(ctx, false) : 0;
}

SEC("raw_tp/sys_exit")
int sc_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	return exited_point(ctx) ? hit(ctx, false) : 0;
}

SEC("kprobe.multi")
int sc_kmulti(struct pt_regs *ctx)
{
	return hit(ctx, false);
}

SEC("kprobe")
int sc_kprobe(struct pt_regs *ctx)
{
	return hit(ctx, false);
}

/* Keeps the error enum in BTF for the front end. */
enum sc_error sc_error_btf;

char LICENSE[] SEC("license") = "GPL";
