/* A few system calls traced at their own tracepoints (syscalls:sys_enter_X
 * and sys_exit_X run for those calls only: a tool that watches rare calls
 * costs the others nothing), or, where those are missing, at tp_btf
 * sys_enter/sys_exit, whose programs run for every call and test its
 * number first. CALL_SET(n) makes the numbers' table, which the front end
 * fills for the tp_btf programs (by the tool's enum; -1 where the
 * architecture has no such call), and call_of(). */
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

#endif
