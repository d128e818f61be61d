/* syscalls:sys_enter_X and sys_exit_X probe points served by one program at
 * each raw sys_enter/sys_exit tracepoint, as the syscalls:* tracepoints are
 * themselves (the kernel's syscall probes hang off the raw ones): each
 * classic tracepoint's link waits for an RCU grace period as it is
 * detached, under one global mutex (720 of them: 21 s to exit), where a raw
 * one's does not. The front end fills syscall_points (common::probes::plan,
 * Point::Syscall): the point of each traced call's entry (slot NR) or exit
 * (slot SYSCALL_POINTS + NR), plus one; 0 for a call not traced. */
#ifndef __SYSCALL_POINTS_BPF_H
#define __SYSCALL_POINTS_BPF_H

#include "syscalls.bpf.h"

/* common::kernel::syscalls::NR_SYSCALLS. */
#define SYSCALL_POINTS 1024

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * SYSCALL_POINTS);
	__type(key, __u32);
	__type(value, __u32);
} syscall_points SEC(".maps");

/* The point call `nr`'s entry (or exit) is traced as, plus one; 0 where it
 * is not traced, or it is a 32-bit call (the syscalls:* tracepoints skip
 * those too). */
static __always_inline __u32 syscall_point(bool exit, long nr)
{
	__u32 key = nr, *point;

	if (nr < 0 || nr >= SYSCALL_POINTS)
		return 0;
	key += exit ? SYSCALL_POINTS : 0;
	point = bpf_map_lookup_elem(&syscall_points, &key);
	if (!point || !*point || compat_syscall())
		return 0;
	return *point;
}

/* The point of a raw sys_enter's call (raw_tp: args[1] is its number). */
static __always_inline __u32 entered_point(struct bpf_raw_tracepoint_args *ctx)
{
	return syscall_point(false, ctx->args[1]);
}

/* The point of a raw sys_exit's call (raw_tp: args[0] is its registers). */
static __always_inline __u32 exited_point(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];

	return syscall_point(true, SYSCALL_NR_READ(regs));
}

#endif
