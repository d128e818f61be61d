// SPDX-License-Identifier: GPL-2.0
/* funccount: calls counted per probe (user functions, USDT probes,
 * tracepoints, kernel functions). One program per kind of hook, attached
 * to every probe of that kind; the probe's index comes from the attach
 * cookie (bpf_get_attach_cookie, 5.15+; with USDT the spec's cookie), or
 * on older kernels from the copy of the object that serves it alone.
 * System call tracepoints are served by one program at each raw sys_enter
 * and sys_exit (syscall_points.bpf.h), with no cookie or copy.
 * Counts go to a per-CPU array indexed by probe (no hashing, no lock), or
 * with -P a per-CPU hash by process and probe. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "funccount.h"
#include "errors.bpf.h"
#include "filters.bpf.h"
#include "maps.bpf.h"
#include "syscall_points.bpf.h"

const volatile bool per_process = false;
/* -p with only uprobes and USDT probes: they are placed in that process
 * alone, so the filter's lookup would only cost. */
const volatile bool placed_in_pid = false;
/* -c: only calls on this CPU; -1 any. */
const volatile __s32 only_cpu = -1;
/* Without attach cookies (5.10-5.14) each copy of the object serves one
 * probe, this one (USDT probes carry theirs in libbpf's spec). */
const volatile bool use_cookie = true;
const volatile __u32 lone_point = 0;

/* Sized by the front end to the number of probes. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct fc_key);
	__type(value, struct fc_pcount);
} by_process SEC(".maps");

static __always_inline void count(__u32 probe)
{
	__u64 id = bpf_get_current_pid_tgid(), *n;
	struct fc_key key = {};
	struct fc_pcount *p, fresh = {};

	if ((!placed_in_pid && !task_allowed(id)) || !cgroup_allowed())
		return;
	if (only_cpu >= 0 && bpf_get_smp_processor_id() != (__u32)only_cpu)
		return;
	if (!per_process) {
		n = bpf_map_lookup_elem(&calls, &probe);
		/* Atomic: a uprobe's program can be preempted by another
		 * task's on the same CPU. */
		if (n)
			__sync_fetch_and_add(n, 1);
		return;
	}
	key.tgid = id >> 32;
	key.probe = probe;
	p = bpf_map_lookup_elem(&by_process, &key);
	if (!p) {
		p = lookup_or_try_init(&by_process, &key, &fresh);
		if (!p) {
			count_error(ERR_FC_FULL);
			return;
		}
	}
	/* The name it has now: a fork that executed a command is listed
	 * under the command's. */
	bpf_get_current_comm(p->comm, sizeof(p->comm));
	__sync_fetch_and_add(&p->count, 1);
}

SEC("uprobe.multi")
int fc_umulti(struct pt_regs *ctx)
{
	count(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

SEC("uprobe")
int fc_uprobe(struct pt_regs *ctx)
{
	count(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

SEC("kprobe.multi")
int fc_kmulti(struct pt_regs *ctx)
{
	count(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

SEC("kprobe")
int fc_kprobe(struct pt_regs *ctx)
{
	count(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

SEC("usdt")
int fc_usdt(struct pt_regs *ctx)
{
	count(bpf_usdt_cookie(ctx));
	return 0;
}

SEC("tracepoint")
int fc_tp(void *ctx)
{
	count(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

/* syscalls:* points: one program at each raw tracepoint. */
SEC("raw_tp/sys_enter")
int fc_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 point = entered_point(ctx);

	if (point)
		count(point - 1);
	return 0;
}

SEC("raw_tp/sys_exit")
int fc_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 point = exited_point(ctx);

	if (point)
		count(point - 1);
	return 0;
}

/* Keeps the error enum in BTF for the front end. */
enum fc_error fc_error_btf;

char LICENSE[] SEC("license") = "GPL";
