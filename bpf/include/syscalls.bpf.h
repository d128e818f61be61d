/* Syscalls seen from the sys_enter/sys_exit tracepoints as tp_btf: one
 * program for every syscall of the system, so the number is tested first
 * (measured here: 190 ns per getppid against 155 with the classic
 * syscalls:* tracepoints and 120 untraced). BTF tracepoints detach without waiting for an RCU grace period, where each
 * classic syscalls:* tracepoint waits for one (under a global mutex): the
 * difference between a tool that exits at once and one that takes a
 * tenth of a second per tracepoint. */
#ifndef __SYSCALLS_BPF_H
#define __SYSCALLS_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

/* The syscall a task's saved user registers belong to, read directly
 * (tp_btf): a probe read would add a third to the cost per syscall. */
#if defined(__TARGET_ARCH_x86)
#define SYSCALL_NR(regs) ((regs)->orig_ax)
#define SYSCALL_NR_READ(regs) BPF_CORE_READ(regs, orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define SYSCALL_NR(regs) ((regs)->syscallno)
#define SYSCALL_NR_READ(regs) BPF_CORE_READ(regs, syscallno)
#endif

/* A 32-bit syscall of a 64-bit kernel (int 0x80, an ia32 program): its
 * numbers are another table's; the syscalls:* tracepoints skip them too. */
static __always_inline bool compat_syscall(void)
{
#if defined(__TARGET_ARCH_x86)
	/* TS_COMPAT, read directly where the kernel has
	 * bpf_get_current_task_btf (5.11+): a probe read is a helper call,
	 * on every system call. */
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf))
		return bpf_get_current_task_btf()->thread_info.status & 0x0002;
	return BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), thread_info.status) &
	       0x0002;
#else
	return false;
#endif
}

#endif
