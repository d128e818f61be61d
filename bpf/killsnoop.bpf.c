// SPDX-License-Identifier: GPL-2.0
/* killsnoop (sigsnoop): signals sent. By default every signal generated
 * (signal:signal_generate: kill(), tkill(), tgkill(), the kernel's own
 * SIGCHLD, SIGSEGV, SIGPIPE…), with the kill(), tkill() and tgkill() calls
 * that failed before making one (no such process, no permission); with -k
 * the three calls only, each with its return. The calls' arguments come
 * from the registers they were entered with, read at exit (5.15+:
 * bpf_task_pt_regs), else from a map filled at entry. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "killsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "callstash.bpf.h"

/* Set by the front end. */
const volatile bool kill_only = false;
const volatile bool failed_only = false;
const volatile __s32 target_sig = 0;
const volatile __s32 target_tpid = 0;

struct event event_layout = {};
enum signal_source source_btf;

static __always_inline int report(__s32 tpid, __s32 sig, __s32 result, __u32 source,
				  const char *tcomm)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct event e;

	if (target_sig && sig != target_sig)
		return 0;
	if (target_tpid && tpid != target_tpid)
		return 0;
	if (failed_only && !result)
		return 0;
	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	task_header_now(&e.task);
	e.tpid = tpid;
	e.sig = sig;
	e.result = result;
	e.source = source;
	if (tcomm)
		bpf_probe_read_kernel_str(e.tcomm, sizeof(e.tcomm), tcomm);
	emit(&e, sizeof(e));
	return 0;
}

SEC("tp_btf/signal_generate")
int BPF_PROG(kill_btf_generate, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	return report(BPF_CORE_READ(task, pid), sig, result, SOURCE_GENERATED, task->comm);
}

SEC("raw_tp/signal_generate")
int BPF_PROG(kill_raw_generate, int sig, struct kernel_siginfo *info, struct task_struct *task,
	     int group, int result)
{
	return report(BPF_CORE_READ(task, pid), sig, result, SOURCE_GENERATED, task->comm);
}

SEC("tracepoint/signal/signal_generate")
int kill_tp_generate(struct trace_event_raw_signal_generate *ctx)
{
	return report(ctx->pid, ctx->sig, ctx->result, SOURCE_GENERATED, ctx->comm);
}

/* A call's end: every one with -k, else the failures only (a call that
 * succeeded made its signal, seen above). */
static __always_inline int returned(__s32 tpid, __s32 sig, long ret, __u32 source)
{
	if (!kill_only && ret >= 0)
		return 0;
	return report(tpid, sig, ret, source, 0);
}

/* 5.15+: the arguments from the registers the call was entered with. */
static __always_inline struct pt_regs *user_regs(void)
{
	return (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
}

SEC("tracepoint/syscalls/sys_exit_kill")
int kill_regs_kill(struct trace_event_raw_sys_exit *ctx)
{
	struct pt_regs *regs = user_regs();

	return returned(PT_REGS_PARM1_SYSCALL(regs), PT_REGS_PARM2_SYSCALL(regs), ctx->ret,
			SOURCE_KILL);
}

SEC("tracepoint/syscalls/sys_exit_tkill")
int kill_regs_tkill(struct trace_event_raw_sys_exit *ctx)
{
	struct pt_regs *regs = user_regs();

	return returned(PT_REGS_PARM1_SYSCALL(regs), PT_REGS_PARM2_SYSCALL(regs), ctx->ret,
			SOURCE_TKILL);
}

SEC("tracepoint/syscalls/sys_exit_tgkill")
int kill_regs_tgkill(struct trace_event_raw_sys_exit *ctx)
{
	struct pt_regs *regs = user_regs();

	return returned(PT_REGS_PARM2_SYSCALL(regs), PT_REGS_PARM3_SYSCALL(regs), ctx->ret,
			SOURCE_TGKILL);
}

/* Before 5.15: the arguments kept at entry, by thread. */
struct call {
	__s32 tpid;
	__s32 sig;
};

CALL_STASH(struct call)

static __always_inline int entered(__s32 tpid, __s32 sig)
{
	struct call c = { .tpid = tpid, .sig = sig };

	return stash_call(&c);
}

static __always_inline int exited(long ret, __u32 source)
{
	struct call c;

	if (!take_call(&c))
		return 0;
	return returned(c.tpid, c.sig, ret, source);
}

SEC("tracepoint/syscalls/sys_enter_kill")
int kill_enter_kill(struct trace_event_raw_sys_enter *ctx)
{
	return entered(ctx->args[0], ctx->args[1]);
}

SEC("tracepoint/syscalls/sys_enter_tkill")
int kill_enter_tkill(struct trace_event_raw_sys_enter *ctx)
{
	return entered(ctx->args[0], ctx->args[1]);
}

SEC("tracepoint/syscalls/sys_enter_tgkill")
int kill_enter_tgkill(struct trace_event_raw_sys_enter *ctx)
{
	return entered(ctx->args[1], ctx->args[2]);
}

SEC("tracepoint/syscalls/sys_exit_kill")
int kill_exit_kill(struct trace_event_raw_sys_exit *ctx)
{
	return exited(ctx->ret, SOURCE_KILL);
}

SEC("tracepoint/syscalls/sys_exit_tkill")
int kill_exit_tkill(struct trace_event_raw_sys_exit *ctx)
{
	return exited(ctx->ret, SOURCE_TKILL);
}

SEC("tracepoint/syscalls/sys_exit_tgkill")
int kill_exit_tgkill(struct trace_event_raw_sys_exit *ctx)
{
	return exited(ctx->ret, SOURCE_TGKILL);
}

char LICENSE[] SEC("license") = "GPL";
