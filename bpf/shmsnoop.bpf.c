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
#include "callstash.bpf.h"

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

CALL_STASH(struct start)

static __always_inline void entered(__u32 call, __u64 a0, __u64 a1, __u64 a2)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct start s = { .call = call, .args = { a0, a1, a2 } };

	if (!task_allowed(id) || !cgroup_allowed())
		return;
	s.ts = bpf_ktime_get_ns();
	stash_call(&s);
}

static __always_inline void exited(long ret)
{
	__u64 now = bpf_ktime_get_ns();
	struct event e = {};
	struct start s;

	if (!take_call(&s))
		return;
	/* shmat returns an address, which may look negative as a long: a
	 * failure is -4095..-1 (the kernel's IS_ERR_VALUE). */
	if (failed_only && !(ret < 0 && ret >= -4095))
		return;
	task_header_now(&e.task);
	e.task.ts_ns = now;
	e.latency_ns = now - s.ts;
	e.args[0] = s.args[0];
	e.args[1] = s.args[1];
	e.args[2] = s.args[2];
	e.call = s.call;
	e.ret = ret;
	emit(&e, sizeof(e));
}

/* The calls' own tracepoints; where they are missing, tp_btf at every
 * call. */
#define EXITED(ctx, ret) exited(ret)
#define SHM_CALL(name, call, nargs)                                                \
	CALL_ENTRY(shm, name, call, nargs, entered)                                \
	CALL_EXIT(shm, name, EXITED)

SHM_CALL(shmget, SHM_GET, 3)
SHM_CALL(shmat, SHM_AT, 3)
SHM_CALL(shmdt, SHM_DT, 1)
SHM_CALL(shmctl, SHM_CTL, 3)
CALL_SET_BTF_ENTRY(shm_btf_enter, entered)
CALL_SET_BTF_EXIT(shm_btf_exit, EXITED)

char LICENSE[] SEC("license") = "GPL";
