/* A few system calls traced at their own tracepoints (syscalls:sys_enter_X
 * and sys_exit_X run for those calls only: a tool that watches rare calls
 * costs the others nothing), or, where those are missing, at tp_btf
 * sys_enter/sys_exit, whose programs run for every call and test its
 * number first. CALL_SET(n) makes the numbers' table, which the front end
 * fills for the tp_btf programs (by the tool's enum; -1 where the
 * architecture has no such call), and call_of(). The programs' shapes
 * follow (after syscalls.bpf.h, which they use): a tool gives its entry
 * and exit steps, ENTERED(call, a0, a1, a2) and EXITED(ctx, ret), which
 * may be macros. */
#ifndef __CALLSET_BPF_H
#define __CALLSET_BPF_H

#define CALL_SET(n)                                                          \
	const volatile long nr_calls[n] = { [0 ... n - 1] = -1 };              \
                                                                             \
	/* The tool's index of call `nr`, or -1 where it is none of them. */   \
	static __always_inline int call_of(long nr)                            \
	{                                                                    \
		int i;                                                       \
                                                                             \
		for (i = 0; i < n; i++)                                      \
			if (nr_calls[i] >= 0 && nr == nr_calls[i])           \
				return i;                                    \
		return -1;                                                   \
	}

/* A call's own entry tracepoint, as program PREFIX_enter_NAME, passing
 * its first NARGS arguments (0 to 3; the rest 0) to ENTERED. A program may
 * read no further into its context than the tracepoint's record goes
 * (else its attach is refused, EACCES): it reads its call's own. */
#define CALL_ENTRY(prefix, name, call, nargs, entered)                         \
	SEC("tracepoint/syscalls/sys_enter_" #name)                             \
	int prefix##_enter_##name(struct trace_event_raw_sys_enter *ctx)        \
	{                                                                      \
		entered(call, nargs > 0 ? ctx->args[0] : 0,                    \
			nargs > 1 ? ctx->args[1] : 0, nargs > 2 ? ctx->args[2] : 0); \
		return 0;                                                      \
	}

/* A call's own exit tracepoint, as program PREFIX_exit_NAME. */
#define CALL_EXIT(prefix, name, exited)                                         \
	SEC("tracepoint/syscalls/sys_exit_" #name)                              \
	int prefix##_exit_##name(struct trace_event_raw_sys_exit *ctx)          \
	{                                                                      \
		exited(ctx, ctx->ret);                                         \
		return 0;                                                      \
	}

/* Where the calls' own tracepoints are missing: every call's entry, as
 * program PROG, passing a call of the set's first three arguments. */
#define CALL_SET_BTF_ENTRY(prog, entered)                                       \
	SEC("tp_btf/sys_enter")                                                 \
	int BPF_PROG(prog, struct pt_regs *regs, long nr)                       \
	{                                                                      \
		int call = call_of(nr);                                        \
                                                                               \
		if (call < 0 || compat_syscall())                              \
			return 0;                                              \
		entered(call, PT_REGS_PARM1_SYSCALL(regs),                     \
			PT_REGS_PARM2_SYSCALL(regs), PT_REGS_PARM3_SYSCALL(regs)); \
		return 0;                                                      \
	}

/* ... and every call's exit, as program PROG. */
#define CALL_SET_BTF_EXIT(prog, exited)                                         \
	SEC("tp_btf/sys_exit")                                                  \
	int BPF_PROG(prog, struct pt_regs *regs, long ret)                      \
	{                                                                      \
		if (call_of(SYSCALL_NR(regs)) < 0 || compat_syscall())         \
			return 0;                                              \
		exited(ctx, ret);                                              \
		return 0;                                                      \
	}

#endif
