// SPDX-License-Identifier: GPL-2.0
/* oomkill: each OOM kill, in the task that ran the OOM killer. Where the
 * kernel allows fentry or kprobes, on oom_kill_process() as BCC: the victim
 * and the size of the memory the kill was for (oom_control's totalpages).
 * Else on oom:mark_victim: the classic tracepoint (its record holds the
 * victim's comm and sizes since 6.2, its pid only before), or as tp_btf
 * (6.8+ passes the victim's task) where tracefs is missing. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "oomkill.h"
#include "events.bpf.h"
#include "task.bpf.h"

/* The page size in kB, set by the front end. */
const volatile __u64 page_kb = 4;

struct event event_layout = {};

static __always_inline void fill_victim(struct event *e, struct task_struct *v)
{
	e->victim_pid = BPF_CORE_READ(v, tgid);
	BPF_CORE_READ_STR_INTO(&e->victim_comm, v, comm);
	e->known |= FROM_COMM;
}

static __always_inline int killing(struct oom_control *oc)
{
	struct event e;

	__builtin_memset(&e, 0, sizeof(e));
	task_header_now(&e.task);
	fill_victim(&e, BPF_CORE_READ(oc, chosen));
	e.total_pages = BPF_CORE_READ(oc, totalpages);
	e.known |= FROM_FUNCTION;
	emit(&e, sizeof(e));
	return 0;
}

SEC("fentry/oom_kill_process")
int BPF_PROG(oom_fentry_kill, struct oom_control *oc)
{
	return killing(oc);
}

SEC("kprobe/oom_kill_process")
int BPF_KPROBE(oom_kprobe_kill, struct oom_control *oc)
{
	return killing(oc);
}

/* 5.x's record: the pid only. */
struct trace_event_raw_mark_victim___old {
	int pid;
} __attribute__((preserve_access_index));

SEC("tracepoint/oom/mark_victim")
int oom_tp_victim(struct trace_event_raw_mark_victim *ctx)
{
	struct event e;
	__u32 loc;

	__builtin_memset(&e, 0, sizeof(e));
	task_header_now(&e.task);
	if (bpf_core_field_exists(ctx->total_vm)) {
		e.victim_pid = BPF_CORE_READ(ctx, pid);
		loc = BPF_CORE_READ(ctx, __data_loc_comm);
		bpf_probe_read_kernel_str(e.victim_comm, sizeof(e.victim_comm),
					  (void *)ctx + (loc & 0xffff));
		e.total_vm_kb = BPF_CORE_READ(ctx, total_vm);
		e.anon_rss_kb = BPF_CORE_READ(ctx, anon_rss);
		e.file_rss_kb = BPF_CORE_READ(ctx, file_rss);
		e.shmem_rss_kb = BPF_CORE_READ(ctx, shmem_rss);
		e.known |= FROM_SIZES | FROM_COMM;
	} else {
		e.victim_pid = BPF_CORE_READ((struct trace_event_raw_mark_victim___old *)ctx, pid);
	}
	emit(&e, sizeof(e));
	return 0;
}

/* 6.8+: the victim's task. Its VM size from its mm; its resident sizes
 * are per-CPU counters, which the tracepoint's record sums: not here. */
SEC("tp_btf/mark_victim")
int BPF_PROG(oom_btf_victim, struct task_struct *task)
{
	struct event e;

	__builtin_memset(&e, 0, sizeof(e));
	task_header_now(&e.task);
	fill_victim(&e, task);
	e.total_vm_kb = BPF_CORE_READ(task, mm, total_vm) * page_kb;
	emit(&e, sizeof(e));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
