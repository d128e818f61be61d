// SPDX-License-Identifier: GPL-2.0
/* runqslower: each time a task waited on a run queue longer than a
 * threshold, from becoming runnable (woken, or preempted while runnable)
 * to running (runqueue.bpf.h keeps the times, as for runqlat). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "runqslower.h"
#include "core_fixes.bpf.h"
#include "events.bpf.h"
#include "filters.bpf.h"
#include "task.bpf.h"
#include "runqueue.bpf.h"

/* Set by the front end. */
const volatile __u64 min_us = 10000;

struct event event_layout = {};

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, bool btf)
{
	__s64 delta = rq_switch(preempt, prev, next, btf);
	struct event e;

	if (delta < 0 || delta / 1000 < min_us)
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	task_header_of(&e.task, next);
	e.latency_us = delta / 1000;
	BPF_CORE_READ_STR_INTO(&e.prev_comm, prev, comm);
	e.prev_tid = BPF_CORE_READ(prev, pid);
	e.cpu = bpf_get_smp_processor_id();
	emit(&e, sizeof(e));
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(rs_btf_wakeup, struct task_struct *p) { return rq_enqueue(p, true); }
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(rs_btf_wakeup_new, struct task_struct *p) { return rq_enqueue(p, true); }
SEC("tp_btf/sched_switch")
int BPF_PROG(rs_btf_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, true);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(rs_raw_wakeup, struct task_struct *p) { return rq_enqueue(p, false); }
SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(rs_raw_wakeup_new, struct task_struct *p) { return rq_enqueue(p, false); }
SEC("raw_tp/sched_switch")
int BPF_PROG(rs_raw_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return on_switch(preempt, prev, next, false);
}

char LICENSE[] SEC("license") = "GPL";
