// SPDX-License-Identifier: GPL-2.0
/* shmsnoop: shmget(), shmat(), shmdt() and shmctl() (System V shared
 * memory), each at its return with its arguments and result.
 *
 * The calls' own tracepoints where the kernel has them, so that the other
 * system calls cost nothing; else tp_btf sys_enter/sys_exit, testing the
 * call's number first (callset.bpf.h). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "shmsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"
#include "callset.bpf.h"

const volatile bool failed_only = false;
CALL_SET(SHM_CALLS)

struct event event_layout = {};
enum shm_call shm_call_btf;

struct start {
	__u64 ts;
	__u64 args[3];
	__u32 call;
	__u32 pad;
};

/* By thread; LRU: a thread that dies inside a call leaves its entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct start);
} starts SEC(".maps");

static __always_inline void entered(__u32 call, __u64 a0, __u64 a1, __u64 a2)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct start s = { .call = call, .args = { a0, a1, a2 } };

	if (!task_allowed(id) || !cgroup_allowed())
		return;
	s.ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&starts, &tid, &s, BPF_ANY);
}

static __always_inline void exited(long ret)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct event e = {};
	struct start *s;

	s = bpf_map_lookup_elem(&starts, &tid);
	if (!s)
		return;
	e.latency_ns = now - s->ts;
	e.args[0] = s->args[0];
	e.args[1] = s->args[1];
	e.args[2] = s->args[2];
	e.call = s->call;
	bpf_map_delete_elem(&starts, &tid);
	/* shmat returns an address, which may look negative as a long: a
	 * failure is -4095..-1 (the kernel's IS_ERR_VALUE). */
	if (failed_only && !(ret < 0 && ret >= -4095))
		return;
	task_header_now(&e.task);
	e.task.ts_ns = now;
	e.ret = ret;
	emit(&e, sizeof(e));
}

/* The calls' own tracepoints. A program may read no further into its
 * context than the tracepoint's record goes (else the attach is refused):
 * each reads its call's arguments only (`nargs`). */
#define SHM_TRACEPOINTS(name, call, nargs)                                         \
	SEC("tracepoint/syscalls/sys_enter_" #name)                                \
	int shm_enter_##name(struct trace_event_raw_sys_enter *ctx)                \
	{                                                                          \
		entered(call, ctx->args[0], nargs > 1 ? ctx->args[1] : 0,          \
			nargs > 2 ? ctx->args[2] : 0);                             \
		return 0;                                                          \
	}                                                                          \
	SEC("tracepoint/syscalls/sys_exit_" #name)                                 \
	int shm_exit_##name(struct trace_event_raw_sys_exit *ctx)                  \
	{                                                                          \
		exited(ctx->ret);                                                  \
		return 0;                                                          \
	}

SHM_TRACEPOINTS(shmget, SHM_GET, 3)
SHM_TRACEPOINTS(shmat, SHM_AT, 3)
SHM_TRACEPOINTS(shmdt, SHM_DT, 1)
SHM_TRACEPOINTS(shmctl, SHM_CTL, 3)

/* Where they are missing: every call's entry and exit. */
SEC("tp_btf/sys_enter")
int BPF_PROG(shm_btf_enter, struct pt_regs *regs, long nr)
{
	int call = call_of(nr);

	if (call < 0 || compat_syscall())
		return 0;
	entered(call, PT_REGS_PARM1_SYSCALL(regs), PT_REGS_PARM2_SYSCALL(regs),
		PT_REGS_PARM3_SYSCALL(regs));
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(shm_btf_exit, struct pt_regs *regs, long ret)
{
	if (call_of(SYSCALL_NR(regs)) < 0 || compat_syscall())
		return 0;
	exited(ret);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
