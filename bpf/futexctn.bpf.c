// SPDX-License-Identifier: GPL-2.0
/* futexctn: how long threads wait in futex() for a user-space lock, as log2
 * histograms by process, futex address and the user stack that waited.
 *
 * The waiting calls' own tracepoints (syscalls:sys_enter_futex and its
 * exit; futex_wait and futex_waitv where the kernel has them), else
 * tp_btf sys_enter/sys_exit testing the call's number first. By default
 * the lock waits: FUTEX_WAIT (glibc's and musl's mutexes, Go's runtime
 * locks) and FUTEX_LOCK_PI (priority-inheritance mutexes); with --all
 * every wait (FUTEX_WAIT_BITSET: condition variables, rwlocks, timed
 * locks, Rust's std locks; futex_waitv). A wait that never slept (the
 * futex's value changed first: EAGAIN) or failed is not counted. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "futexctn.h"
#include "bits.bpf.h"
#include "errors.bpf.h"
#include "stacks.bpf.h"
#include "maps.bpf.h"
#include "filters.bpf.h"
#include "task.bpf.h"
#include "syscalls.bpf.h"
#include "callset.bpf.h"
#include "callstash.bpf.h"

/* include/uapi/linux/futex.h */
#define FUTEX_WAIT 0
#define FUTEX_LOCK_PI 6
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAIT_REQUEUE_PI 11
#define FUTEX_LOCK_PI2 13
#define FUTEX_PRIVATE_FLAG 128
#define FUTEX_CLOCK_REALTIME 256
#define FUTEX_CMD_MASK ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME)

#define EINTR 4
#define ETIMEDOUT 110

/* --all: every wait, not only the lock waits. */
const volatile bool all_waits = false;
/* -l: this futex only (0: every one). */
const volatile __u64 targ_lock = 0;
/* Not -s: keyed by the user stack too. */
const volatile bool with_stacks = true;
const volatile bool per_container = false;
const volatile bool millis = false;
const volatile bool fine = false;

CALL_SET(FUTEX_CALLS)

struct futexctn_key key_layout = {};
struct futexctn_hist hist_layout = {};
enum futexctn_error error_layout;
enum futex_call futex_call_layout;

STACK_MAP(stacks);
HIST_MAPS(struct futexctn_key, struct futexctn_hist, 10240);

/* A wait under way: since when, on which futex (futex_waitv: the address
 * of its array of futexes). */
struct start {
	__u64 ts;
	__u64 uaddr;
	__u32 call;
	__u32 pad;
};

CALL_STASH(struct start)

static __always_inline bool counted_op(int op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
	case FUTEX_LOCK_PI:
	case FUTEX_LOCK_PI2:
		return true;
	case FUTEX_WAIT_BITSET:
	case FUTEX_WAIT_REQUEUE_PI:
		return all_waits;
	}
	return false;
}

static __always_inline void entered(__u32 call, __u64 a0, __u64 a1, __u64 a2)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct start s = { .call = call, .uaddr = a0 };

	if (call == FUTEX_CALL_FUTEX && !counted_op(a1))
		return;
	if (call == FUTEX_CALL_WAITV && !all_waits)
		return;
	if (targ_lock && call != FUTEX_CALL_WAITV && a0 != targ_lock)
		return;
	if (!task_allowed(id) || !cgroup_allowed())
		return;
	s.ts = bpf_ktime_get_ns();
	stash_call(&s);
}

/* struct futex_waitv of include/uapi/linux/futex.h. */
struct waitv {
	__u64 val;
	__u64 uaddr;
	__u32 flags;
	__u32 reserved;
};

static __always_inline void exited(void *ctx, long ret)
{
	__u64 now = bpf_ktime_get_ns(), delta;
	struct futexctn_key key = {};
	struct fine_hist *fh = 0;
	struct futexctn_hist *h;
	struct start s;
	bool first;

	if (!take_call(&s))
		return;
	/* Slept and woken (futex_waitv: the index of the futex woken), or
	 * slept until its timeout or a signal; not EAGAIN (the value had
	 * changed: no sleep) nor a failure. */
	if (ret < 0 && ret != -ETIMEDOUT && ret != -EINTR)
		return;
	key.uaddr = s.uaddr;
	if (s.call == FUTEX_CALL_WAITV) {
		struct waitv *v = (struct waitv *)s.uaddr;

		if (ret < 0 || bpf_probe_read_user(&key.uaddr, sizeof(key.uaddr), &v[ret].uaddr))
			return;
		if (targ_lock && key.uaddr != targ_lock)
			return;
	}
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	key.stack_id = with_stacks ? stack_id(ctx, &stacks, BPF_F_USER_STACK) : -1;
	if (per_container)
		key.cgroup_id = bpf_get_current_cgroup_id();
	h = lookup_or_try_init(&hists, &key, &zero_hist);
	if (!h) {
		count_error(ERR_HISTS_FULL);
		return;
	}
	delta = (now - s.ts) / (millis ? 1000000 : 1000);
	first = h->hist.count == 0;
	if (!h->comm[0])
		bpf_get_current_comm(&h->comm, sizeof(h->comm));
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &key, &zero_fine);
	hist_add(&h->hist, fh, delta);
	/* Racy between CPUs, as libbpf-tools' are: a bound may miss a
	 * concurrent wait of the same key by a hair. */
	if (first || delta < h->min)
		h->min = delta;
	if (delta > h->max)
		h->max = delta;
}

#define FUTEX_EXITED(ctx, ret) exited(ctx, ret)
CALL_ENTRY(futex, futex, FUTEX_CALL_FUTEX, 3, entered)
CALL_EXIT(futex, futex, FUTEX_EXITED)
CALL_ENTRY(futex, futex_wait, FUTEX_CALL_WAIT, 1, entered)
CALL_EXIT(futex, futex_wait, FUTEX_EXITED)
CALL_ENTRY(futex, futex_waitv, FUTEX_CALL_WAITV, 1, entered)
CALL_EXIT(futex, futex_waitv, FUTEX_EXITED)
CALL_SET_BTF_ENTRY(futex_btf_enter, entered)
CALL_SET_BTF_EXIT(futex_btf_exit, FUTEX_EXITED)

char LICENSE[] SEC("license") = "GPL";
