/* File system calls timed at sys_enter and sys_exit, for the file tools
 * on a kernel without fentry or kprobes on the functions that do the work
 * (fsslower's and fileslower's slow calls, fsdist's histograms). */
#ifndef __SYSTIME_BPF_H
#define __SYSTIME_BPF_H

#include "task.bpf.h"
#include "fileio.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"
#include "maps.bpf.h"

/* Calls quicker than this are not the tool's (0: every call). */
const volatile __u64 min_latency_ns = 0;

/* The system call mode, for a kernel without fentry or kprobes on the
 * functions that do the work: every system call passes sys_enter and
 * sys_exit, so a call that is not slow must cost no more than noting when
 * it began and finding, at its end, that it was quick. The entry keeps the
 * time (and where it can, its CPU's run queue clock), in task local
 * storage (5.11+; by thread in a hash map where the kernel has none); the
 * exit finds the file, its type, its file system, its position and its
 * name only for a call that took at least min_latency_ns. The arguments
 * are still in the task's saved registers at exit. */
struct sys_start {
	__u64 ns;
	/* The run queue the call began on (its CPU's) and its clock then:
	 * tp_btf, where the tick is known. */
	__u64 rq;
	__u64 rq_clock;
};

TASK_START_MAPS_OF(struct sys_start);

/* The kernel's tick in nanoseconds (common::kernel::fileio::
 * quick_call_tick_ns), 0 where the run queue clock cannot bound a call. */
const volatile __u64 tick_ns = 0;

/* The run queue of the CPU that `task` (the current task) runs on, from a
 * tp_btf program: its CFS queue points to it (CONFIG_FAIR_GROUP_SCHED;
 * else none). */
static __always_inline struct rq *sys_this_rq(struct task_struct *task)
{
	if (!tick_ns || !bpf_core_field_exists(struct sched_entity, cfs_rq))
		return 0;
	return task->se.cfs_rq->rq;
}

/* A call's start, from a tp_btf program: the clock (a helper call of some
 * 20 ns, the one cost of this mode that no program can do without) and the
 * run queue's clock (loads). */
static __always_inline void sys_start_btf(struct sys_start *s, struct task_struct *task)
{
	struct rq *rq = sys_this_rq(task);

	/* The run queue's clock first: a tick (or a VM's stolen time) between
	 * the two reads must not leave it later than the start. */
	if (rq) {
		s->rq = (__u64)rq;
		s->rq_clock = rq->clock;
	} else {
		s->rq = 0;
	}
	s->ns = bpf_ktime_get_ns();
}

/* Whether a call that began at `s` surely took less than min_latency_ns,
 * known without reading the clock again. A run queue's clock is the
 * scheduler's clock when its CPU last scheduled or ticked: at the start it
 * is no later than the start; at the end, on the same CPU (where the task
 * has run since it was last scheduled, so that CPU ticks), at most a tick
 * behind. So a call took less than the difference and a tick; one more
 * tick of margin. The global jiffies would do as well but for the stalls
 * the kernel itself allows for (a VM's timekeeping CPU preempted: five
 * ticks). With the default 10 ms and 250 Hz: every call that saw no tick
 * of its CPU, all but the slow. */
static __always_inline bool sys_surely_quick(const struct sys_start *s, struct task_struct *task)
{
	struct rq *rq = sys_this_rq(task);

	return rq && (__u64)rq == s->rq && rq->clock - s->rq_clock + 2 * tick_ns < min_latency_ns;
}

static __always_inline bool sys_allowed(void)
{
	return task_allowed(bpf_get_current_pid_tgid()) && cgroup_allowed();
}

/* Whether a call's start is kept: a kind timed, and, only where -p, -t or a
 * cgroup narrows the tracing, of a task traced (else the few slow calls are
 * checked at their exit: one helper call less on each). */
static __always_inline bool sys_wanted(long nr)
{
	return file_op(nr) != FOP_NONE && (!narrowed() || sys_allowed());
}

/* The system call mode's programs: fs_sys_enter and fs_sys_exit (tp_btf,
 * task storage), fs_raw_enter and fs_raw_exit (raw_tp, a hash by thread:
 * kernels before 5.11); `done(nr, fd, off, ret, began, now)` is called for
 * each call of a kind in file_ops that took at least min_latency_ns, with
 * its first and fourth arguments. */
#define TIMED_SYSCALL_PROGRAMS(done)						\
	SEC("tp_btf/sys_enter")						\
	int BPF_PROG(fs_sys_enter, struct pt_regs *regs, long nr)	\
	{								\
		struct task_struct *task;				\
		struct sys_start *start;				\
									\
		if (!sys_wanted(nr))				\
			return 0;					\
		task = bpf_get_current_task_btf();			\
		start = bpf_task_storage_get(&start_storage, task, 0,	\
					     BPF_LOCAL_STORAGE_GET_F_CREATE); \
		if (start)						\
			sys_start_btf(start, task);			\
		return 0;						\
	}								\
	SEC("tp_btf/sys_exit")						\
	int BPF_PROG(fs_sys_exit, struct pt_regs *regs, long ret)	\
	{								\
		long nr = SYSCALL_NR(regs);				\
		struct task_struct *task;				\
		struct sys_start *start;				\
		__u64 began, now;					\
									\
		if (file_op(nr) == FOP_NONE)				\
			return 0;					\
		task = bpf_get_current_task_btf();			\
		start = bpf_task_storage_get(&start_storage, task, 0, 0); \
		if (!start || !start->ns)				\
			return 0;					\
		began = start->ns;					\
		start->ns = 0;						\
		if (sys_surely_quick(start, task))			\
			return 0;					\
		now = bpf_ktime_get_ns();				\
		if (now - began >= min_latency_ns)			\
			done(nr, PT_REGS_PARM1_SYSCALL(regs),	\
				      PT_REGS_PARM4_SYSCALL(regs), ret, began, now); \
		return 0;						\
	}								\
	SEC("raw_tp/sys_enter")						\
	int BPF_PROG(fs_raw_enter, struct pt_regs *regs, long nr)	\
	{								\
		__u32 tid = (__u32)bpf_get_current_pid_tgid();		\
		struct sys_start s = {};				\
									\
		if (!sys_wanted(nr))				\
			return 0;					\
		s.ns = bpf_ktime_get_ns();				\
		bpf_map_update_elem(&start, &tid, &s, BPF_ANY);		\
		return 0;						\
	}								\
	SEC("raw_tp/sys_exit")						\
	int BPF_PROG(fs_raw_exit, struct pt_regs *regs, long ret)	\
	{								\
		__u32 tid = (__u32)bpf_get_current_pid_tgid();		\
		long nr = SYSCALL_NR_READ(regs);			\
		struct sys_start *t;					\
		__u64 began, now;					\
									\
		if (file_op(nr) == FOP_NONE)				\
			return 0;					\
		t = bpf_map_lookup_elem(&start, &tid);			\
		if (!t)							\
			return 0;					\
		began = t->ns;						\
		bpf_map_delete_elem(&start, &tid);			\
		now = bpf_ktime_get_ns();				\
		if (now - began >= min_latency_ns)			\
			done(nr, PT_REGS_PARM1_CORE_SYSCALL(regs), \
				      PT_REGS_PARM4_CORE_SYSCALL(regs), ret, began, now); \
		return 0;						\
	}								\
	struct timed_syscall_programs_end

#endif
