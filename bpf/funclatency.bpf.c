// SPDX-License-Identifier: GPL-2.0
/* funclatency: the time of each call of the probed functions (user
 * functions by uprobes, kernel functions by kprobes), as log2 histograms
 * kept in the kernel: one entry and one return program per kind of hook,
 * each attached to every function, which they tell apart by the attach
 * cookie (or, without cookies, a copy of the object per function). Each thread keeps a stack of its calls in progress, so nested
 * and recursive calls are timed each (up to -l levels). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "funclatency.h"
#include "errors.bpf.h"
#include "bits.bpf.h"
#include "filters.bpf.h"
#include "maps.bpf.h"

/* -l: the nesting levels timed (1: only the outermost call). */
const volatile __u32 max_depth = MAX_DEPTH;
/* The histogram's unit in nanoseconds (1, 1000, 1000000). */
const volatile __u64 unit_ns = 1;
const volatile bool per_function = false;
const volatile bool fine = false;
/* -p with only uprobes: they are placed in that process alone. */
const volatile bool placed_in_pid = false;
/* Without attach cookies (5.10-5.14) each copy of the object serves one
 * function, this one. */
const volatile bool use_cookie = true;
const volatile __u32 lone_point = 0;

struct {
	/* LRU: a thread that ends inside a call leaves its stack behind. */
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct call_stack);
} calls SEC(".maps");

HIST_MAPS(__u64, struct fl_hist, 1024);

static const struct call_stack empty_stack;

static __always_inline void enter(__u32 probe)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tid = (__u32)id;
	struct call_stack *s;
	__u64 d;

	if ((!placed_in_pid && !task_allowed(id)) || !cgroup_allowed())
		return;
	s = bpf_map_lookup_elem(&calls, &tid);
	if (!s) {
		s = lookup_or_try_init(&calls, &tid, &empty_stack);
		if (!s) {
			count_error(ERR_FL_THREADS_FULL);
			return;
		}
	}
	d = s->depth;
	/* Deeper calls than are timed are counted, so that their returns
	 * pop nothing of the levels timed. (64 bits and barrier_var: the
	 * verifier must see the bound on the register that indexes.) */
	barrier_var(d);
	if (d < max_depth && d < MAX_DEPTH) {
		s->start[d] = now;
		s->probe[d] = probe;
	}
	s->depth = d + 1;
}

static __always_inline void leave(__u32 probe)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tid = (__u32)id;
	struct fine_hist *fh = 0;
	struct call_stack *s;
	struct fl_hist *h;
	__u64 key = 0, delta, d;

	s = bpf_map_lookup_elem(&calls, &tid);
	if (!s || !s->depth)
		return;
	d = s->depth - 1;
	s->depth = d;
	barrier_var(d);
	if (d >= max_depth || d >= MAX_DEPTH)
		return;
	if (s->probe[d] != probe) {
		count_error(ERR_FL_UNMATCHED);
		s->depth = 0;
		return;
	}
	delta = now - s->start[d];
	if (per_function)
		key = probe;
	h = lookup_or_try_init(&hists, &key, &zero_hist);
	if (!h)
		return;
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &key, &zero_fine);
	hist_add(&h->hist, fh, delta / unit_ns);
}

SEC("uprobe.multi")
int fl_umulti_enter(struct pt_regs *ctx)
{
	enter(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

SEC("uretprobe.multi")
int fl_umulti_exit(struct pt_regs *ctx)
{
	leave(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

SEC("uprobe")
int fl_uprobe_enter(struct pt_regs *ctx)
{
	enter(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

SEC("uretprobe")
int fl_uprobe_exit(struct pt_regs *ctx)
{
	leave(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

SEC("kprobe.multi")
int fl_kmulti_enter(struct pt_regs *ctx)
{
	enter(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

SEC("kretprobe.multi")
int fl_kmulti_exit(struct pt_regs *ctx)
{
	leave(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

SEC("kprobe")
int fl_kprobe_enter(struct pt_regs *ctx)
{
	enter(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

SEC("kretprobe")
int fl_kprobe_exit(struct pt_regs *ctx)
{
	leave(use_cookie ? bpf_get_attach_cookie(ctx) : lone_point);
	return 0;
}

/* Keeps the error enum in BTF for the front end. */
enum fl_error fl_error_btf;

char LICENSE[] SEC("license") = "GPL";
