// SPDX-License-Identifier: GPL-2.0
/* mountsnoop: mount(), umount(), fsopen(), fsmount() and move_mount(), each
 * with its arguments and result, at its return. Rare calls: each on its
 * own tracepoint, so that nothing runs on any other system call (a tp_btf
 * program on sys_exit would run on all of them). The arguments come from
 * the registers the call was entered with (5.15+: bpf_task_pt_regs), else
 * from a map filled at entry. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "mountsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "callstash.bpf.h"

const volatile bool failed_only = false;

struct event event_layout = {};
enum mount_call mount_call_btf;

/* A call's arguments, as entered. */
struct call {
	__u64 a[5];
	__u32 call;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct event);
} scratch SEC(".maps");

static __always_inline int report(long ret, const struct call *c)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_struct *t;
	__u32 zero = 0;
	struct event *e;

	if (failed_only && ret >= 0)
		return 0;
	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	__builtin_memset(e, 0, sizeof(*e));
	task_header_now(&e->task);
	t = (struct task_struct *)bpf_get_current_task();
	e->mnt_ns = BPF_CORE_READ(t, nsproxy, mnt_ns, ns.inum);
	e->ppid = BPF_CORE_READ(t, real_parent, tgid);
	BPF_CORE_READ_STR_INTO(&e->pcomm, t, real_parent, comm);
	e->ret = ret;
	e->call = c->call;
	switch (c->call) {
	case CALL_MOUNT:
		bpf_probe_read_user_str(e->str1, sizeof(e->str1), (void *)c->a[0]);
		bpf_probe_read_user_str(e->str2, sizeof(e->str2), (void *)c->a[1]);
		bpf_probe_read_user_str(e->fstype, sizeof(e->fstype), (void *)c->a[2]);
		e->flags = c->a[3];
		bpf_probe_read_user_str(e->data, sizeof(e->data), (void *)c->a[4]);
		break;
	case CALL_UMOUNT:
	case CALL_FSOPEN:
		bpf_probe_read_user_str(e->str1, sizeof(e->str1), (void *)c->a[0]);
		e->flags = c->a[1];
		break;
	case CALL_FSMOUNT:
		e->fd1 = c->a[0];
		e->flags = c->a[1];
		e->attrs = c->a[2];
		break;
	default:
		e->fd1 = c->a[0];
		bpf_probe_read_user_str(e->str1, sizeof(e->str1), (void *)c->a[1]);
		e->fd2 = c->a[2];
		bpf_probe_read_user_str(e->str2, sizeof(e->str2), (void *)c->a[3]);
		e->flags = c->a[4];
	}
	emit(e, sizeof(*e));
	return 0;
}

/* 5.15+: the arguments from the registers at exit. */
static __always_inline int regs_exit(long ret, __u32 call)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	struct call c = {
		.a = { PT_REGS_PARM1_SYSCALL(regs), PT_REGS_PARM2_SYSCALL(regs),
		       PT_REGS_PARM3_SYSCALL(regs), PT_REGS_PARM4_SYSCALL(regs),
		       PT_REGS_PARM5_SYSCALL(regs) },
		.call = call,
	};

	return report(ret, &c);
}

#define REGS_EXIT(name, kind)                                                 \
	SEC("tracepoint/syscalls/sys_exit_" #name)                            \
	int mount_regs_##name(struct trace_event_raw_sys_exit *ctx)           \
	{                                                                      \
		return regs_exit(ctx->ret, kind);                              \
	}

REGS_EXIT(mount, CALL_MOUNT)
REGS_EXIT(umount, CALL_UMOUNT)
REGS_EXIT(fsopen, CALL_FSOPEN)
REGS_EXIT(fsmount, CALL_FSMOUNT)
REGS_EXIT(move_mount, CALL_MOVE_MOUNT)

/* Before 5.15: the arguments kept at entry, by thread. */
CALL_STASH(struct call)

static __always_inline int exited(long ret)
{
	struct call c;

	if (!take_call(&c))
		return 0;
	return report(ret, &c);
}

/* Each reads only its own arguments: a read past the record's end makes
 * the kernel refuse to attach the program (EACCES). */
#define ENTRY_EXIT(name, kind, ...)                                           \
	SEC("tracepoint/syscalls/sys_enter_" #name)                           \
	int mount_enter_##name(struct trace_event_raw_sys_enter *ctx)         \
	{                                                                      \
		struct call c = { .a = { __VA_ARGS__ }, .call = kind };         \
                                                                               \
		return stash_call(&c);                                         \
	}                                                                      \
	SEC("tracepoint/syscalls/sys_exit_" #name)                            \
	int mount_exit_##name(struct trace_event_raw_sys_exit *ctx)           \
	{                                                                      \
		return exited(ctx->ret);                                       \
	}

ENTRY_EXIT(mount, CALL_MOUNT, ctx->args[0], ctx->args[1], ctx->args[2], ctx->args[3],
	   ctx->args[4])
ENTRY_EXIT(umount, CALL_UMOUNT, ctx->args[0], ctx->args[1])
ENTRY_EXIT(fsopen, CALL_FSOPEN, ctx->args[0], ctx->args[1])
ENTRY_EXIT(fsmount, CALL_FSMOUNT, ctx->args[0], ctx->args[1], ctx->args[2])
ENTRY_EXIT(move_mount, CALL_MOVE_MOUNT, ctx->args[0], ctx->args[1], ctx->args[2],
	   ctx->args[3], ctx->args[4])

char LICENSE[] SEC("license") = "GPL";
