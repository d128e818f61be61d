// SPDX-License-Identifier: GPL-2.0
/* trace: a record per hit of each probe (user functions and their
 * returns, USDT probes, tracepoints, kernel functions), with what the
 * front end's formats and filters need: the arguments or the return
 * value, a tracepoint's record, strings read where they point, stacks.
 * One program per kind of hook serves every point of that kind; the
 * point's settings (struct tr_probe) are found by its attach cookie
 * (5.15+), or are the one point's where a kind has one point and the
 * kernel has no cookies. A filter's comparisons of a value with a
 * constant are made here (up to TRACE_TERMS, joined by &&); the front end
 * makes the rest. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include <bpf/usdt.bpf.h>
#include "trace.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "bits.bpf.h"

/* Set by the front end. */
const volatile bool use_cookie = true;
/* Without cookies (before 5.15): the one point of each kind. */
const volatile __u32 lone_uprobe = 0;
const volatile __u32 lone_uretprobe = 0;
const volatile __u32 lone_kprobe = 0;
const volatile __u32 lone_kretprobe = 0;
const volatile __u32 lone_tp = 0;
/* -S: the tool's own process too. */
const volatile bool include_self = false;
/* -p with only uprobes and USDT probes: placed in that process alone. */
const volatile bool placed_in_pid = false;
/* -Z, and the most string slots a point uses. */
const volatile __u32 str_bytes = 80;
const volatile __u32 str_slots = 0;
/* -K, -U: bytes of each stack to take; 0 none. */
const volatile __u32 kstack_bytes = 0;
const volatile __u32 ustack_bytes = 0;

struct tr_event event_layout = {};
struct tr_agg_key agg_key_layout = {};
struct tr_agg agg_layout = {};
enum tr_agg_kind agg_kind_btf;
enum tr_source source_btf;
enum tr_op op_btf;

/* Sized by the front end to the number of points. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tr_probe);
} probes SEC(".maps");

/* Entries kept for their returns (argdist's $latency and $entry());
 * LRU: a thread that ends inside a call leaves its entry behind. Sized by
 * the front end (1 where no point keeps entries). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct tr_stash_key);
	__type(value, struct tr_stash);
} stashed SEC(".maps");

/* argdist's counts, drained by each report. Not LRU: a full map is
 * counted as lost, never silently evicted. Sized by the front end. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct tr_agg_key);
	__type(value, struct tr_agg);
} aggs SEC(".maps");

/* Too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tr_event);
} scratch SEC(".maps");

/* A value of the hit: an argument, the return value, a record's field,
 * who and where. `ctx` is a tracepoint's record for TR_SRC_FIELD. */
static __always_inline __s64 value_of(const struct tr_value *v, struct tr_event *e,
				      void *ctx)
{
	__u64 x = 0, size = v->size, bits;
	__u32 i = v->index;

	switch (v->source) {
	case TR_SRC_ARG:
		if (i < TRACE_ARGS)
			x = e->args[i];
		break;
	case TR_SRC_RETVAL:
		x = e->retval;
		break;
	case TR_SRC_FIELD:
		if (size > 8)
			size = 8;
		barrier_var(size);
		bpf_probe_read_kernel(&x, size, ctx + v->offset);
		break;
	case TR_SRC_TID:
		x = e->task.tid;
		break;
	case TR_SRC_TGID:
		x = e->task.pid;
		break;
	case TR_SRC_UID:
		x = e->uid;
		break;
	case TR_SRC_GID:
		x = e->gid;
		break;
	case TR_SRC_CPU:
		x = e->cpu;
		break;
	case TR_SRC_LATENCY:
		x = e->latency_ns;
		break;
	case TR_SRC_ENTRY_ARG:
		if (i < TRACE_ARGS)
			x = e->entry_args[i];
		break;
	}
	if (v->size && v->size < 8) {
		bits = 64 - 8 * (__u64)v->size;
		x = v->is_signed ? (__u64)(((__s64)(x << bits)) >> bits) : (x << bits) >> bits;
	}
	if (v->size2 && v->size2 < 8) {
		bits = 64 - 8 * (__u64)v->size2;
		x = v->is_signed2 ? (__u64)(((__s64)(x << bits)) >> bits) : (x << bits) >> bits;
	}
	return (__s64)x;
}

/* argdist: one more hit of these values (or in this slot). */
static __always_inline void aggregate(const struct tr_probe *p, __u32 point,
				      struct tr_event *e, void *ctx)
{
	struct tr_agg_key k = { .point = point };
	struct tr_agg zero = {}, *a;
	__u64 v = 0;

	if (p->agg == TR_AGG_HIST) {
		v = value_of(&p->aggs[0], e, ctx);
		k.vals[0] = log2_u64(v);
	} else {
		for (int i = 0; i < TRACE_AGG_VALS; i++) {
			if (i >= p->naggs)
				break;
			k.vals[i] = value_of(&p->aggs[i], e, ctx);
		}
	}
	a = bpf_map_lookup_elem(&aggs, &k);
	if (!a) {
		bpf_map_update_elem(&aggs, &k, &zero, BPF_NOEXIST);
		a = bpf_map_lookup_elem(&aggs, &k);
		if (!a) {
			count_lost();
			return;
		}
	}
	__sync_fetch_and_add(&a->count, 1);
	if (p->agg == TR_AGG_HIST)
		__sync_fetch_and_add(&a->total, v);
}

static __always_inline bool holds(const struct tr_term *t, struct tr_event *e, void *ctx)
{
	__s64 v = value_of(&t->value, e, ctx), c = t->constant;

	switch (t->op) {
	case TR_OP_EQ:
		return v == c;
	case TR_OP_NE:
		return v != c;
	case TR_OP_LT:
		return v < c;
	case TR_OP_LE:
		return v <= c;
	case TR_OP_GT:
		return v > c;
	case TR_OP_GE:
		return v >= c;
	default:
		return v != 0;
	}
}

/* A string where `addr` points: kernel memory for a kernel address, else
 * the process's. False where the process's memory could not be read
 * without a page fault, which this program cannot take. */
static __always_inline bool read_str(char *dst, __u64 addr)
{
	if (!addr) {
		dst[0] = 0;
		return true;
	}
	if ((__s64)addr < 0) {
		if (bpf_probe_read_kernel_str(dst, str_bytes, (void *)addr) < 0)
			dst[0] = 0;
	} else if (bpf_probe_read_user_str(dst, str_bytes, (void *)addr) < 0) {
		dst[0] = 0;
		return false;
	}
	return true;
}

enum hook { HOOK_REGS, HOOK_USDT, HOOK_TP };

static __always_inline int hit(void *ctx, enum hook hook, __u64 cookie)
{
	__u64 id = bpf_get_current_pid_tgid(), uid_gid;
	struct tr_probe *p;
	struct tr_event *e;
	__u32 zero = 0, point = cookie;
	bool have_ids;
	__u64 len;
	long n;

	if (!placed_in_pid && !(include_self ? ids_allowed(id) : task_allowed(id)))
		return 0;
	if (!cgroup_allowed())
		return 0;
	p = bpf_map_lookup_elem(&probes, &point);
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!p || !e)
		return 0;
	/* The ids before the filters only where they read them; else only
	 * for a hit that is sent (a helper call saved on each refused or
	 * counted here). */
	uid_gid = 0;
	have_ids = filter_uid != INVALID_UID || p->ids;
	if (have_ids) {
		uid_gid = bpf_get_current_uid_gid();
		if (!uid_allowed((__u32)uid_gid))
			return 0;
	}
	e->task.pid = id >> 32;
	e->task.tid = (__u32)id;
	e->uid = (__u32)uid_gid;
	e->gid = uid_gid >> 32;
	e->cpu = bpf_get_smp_processor_id();
	e->probe = point;
	e->retval = 0;
	if (hook == HOOK_REGS) {
		struct pt_regs *regs = ctx;

		if (p->is_return) {
			for (int i = 0; i < TRACE_ARGS; i++)
				e->args[i] = 0;
			e->retval = PT_REGS_RC(regs);
		} else if (p->syscall_regs) {
			regs = (struct pt_regs *)PT_REGS_PARM1(regs);
			e->args[0] = PT_REGS_PARM1_CORE(regs);
			e->args[1] = PT_REGS_PARM2_CORE(regs);
			e->args[2] = PT_REGS_PARM3_CORE(regs);
			e->args[3] = PT_REGS_PARM4_CORE_SYSCALL(regs);
			e->args[4] = PT_REGS_PARM5_CORE(regs);
			e->args[5] = PT_REGS_PARM6_CORE(regs);
		} else {
			e->args[0] = PT_REGS_PARM1(regs);
			e->args[1] = PT_REGS_PARM2(regs);
			e->args[2] = PT_REGS_PARM3(regs);
			e->args[3] = PT_REGS_PARM4(regs);
			e->args[4] = PT_REGS_PARM5(regs);
			e->args[5] = PT_REGS_PARM6(regs);
		}
		if (p->stash) {
			struct tr_stash_key k = { .tid = (__u32)id, .pair = p->pair };
			struct tr_stash v = { .ts = bpf_ktime_get_ns() };

			for (int i = 0; i < TRACE_ARGS; i++)
				v.args[i] = e->args[i];
			bpf_map_update_elem(&stashed, &k, &v, BPF_ANY);
			return 0;
		}
		if (p->needs_entry) {
			struct tr_stash_key k = { .tid = (__u32)id, .pair = point };
			struct tr_stash *v = bpf_map_lookup_elem(&stashed, &k);

			if (!v)
				return 0;
			e->latency_ns = bpf_ktime_get_ns() - v->ts;
			for (int i = 0; i < TRACE_ARGS; i++)
				e->entry_args[i] = v->args[i];
			bpf_map_delete_elem(&stashed, &k);
		}
	} else if (hook == HOOK_USDT) {
		for (int i = 0; i < TRACE_ARGS; i++) {
			long v = 0;

			bpf_usdt_arg(ctx, i, &v);
			e->args[i] = v;
		}
	} else {
		for (int i = 0; i < TRACE_ARGS; i++)
			e->args[i] = 0;
	}
	/* The kernel's comparisons: a hit that fails one is not sent. */
	for (int i = 0; i < TRACE_TERMS; i++) {
		if (i >= p->nterms)
			break;
		if (!holds(&p->terms[i], e, ctx))
			return 0;
	}
	if (p->agg) {
		aggregate(p, point, e, ctx);
		return 0;
	}
	if (!have_ids) {
		uid_gid = bpf_get_current_uid_gid();
		e->uid = (__u32)uid_gid;
		e->gid = uid_gid >> 32;
	}
	task_header_now(&e->task);
	e->record_bytes = 0;
	if (hook == HOOK_TP) {
		__u64 bytes = p->record_bytes;

		if (bytes > TRACE_RECORD_MAX)
			bytes = TRACE_RECORD_MAX;
		barrier_var(bytes);
		if (bytes && !bpf_probe_read_kernel(e->record, bytes, ctx))
			e->record_bytes = bytes;
	}
	e->str_missed = 0;
	for (int i = 0; i < TRACE_STRS; i++) {
		const struct tr_value *s = &p->strs[i];
		__u64 addr;
		char *dst = e->strs + i * str_bytes;
		__u32 loc = 0;

		if (i >= str_slots)
			break;
		if (i >= p->nstrs) {
			dst[0] = 0;
			continue;
		}
		if (s->source == TR_SRC_DATALOC) {
			bpf_probe_read_kernel(&loc, sizeof(loc), ctx + s->offset);
			if (bpf_probe_read_kernel_str(dst, str_bytes, ctx + (loc & 0xffff)) < 0)
				dst[0] = 0;
		} else {
			addr = value_of(s, e, ctx);
			if (!read_str(dst, addr)) {
				e->str_missed |= 1 << i;
				e->str_addrs[i] = addr;
			}
		}
	}
	e->kframes = 0;
	e->uframes = 0;
	if (!kstack_bytes && !ustack_bytes) {
		len = offsetof(struct tr_event, strs) + (__u64)str_slots * str_bytes;
		if (len > sizeof(*e))
			len = sizeof(*e);
		emit(e, len);
		return 0;
	}
	if (kstack_bytes) {
		n = bpf_get_stack(ctx, e->kstack, kstack_bytes, 0);
		e->kframes = n > 0 ? n / sizeof(__u64) : 0;
	}
	e->entry_caller = 0;
	if (ustack_bytes) {
		n = bpf_get_stack(ctx, e->ustack, ustack_bytes, BPF_F_USER_STACK);
		e->uframes = n > 0 ? n / sizeof(__u64) : 0;
		/* A user function's entry (user registers: a user %rsp) where
		 * no frame is set up yet (%rbp is still the caller's): past a
		 * frame setup the two are equal. */
		if (hook == HOOK_REGS && !p->is_return) {
			struct pt_regs *regs = ctx;
			__u64 sp = PT_REGS_SP(regs), caller = 0;

			if ((__s64)sp > 0 && PT_REGS_FP(regs) != sp &&
			    !bpf_probe_read_user(&caller, sizeof(caller), (void *)sp))
				e->entry_caller = caller;
		}
	}
	emit(e, sizeof(*e));
	return 0;
}

/* Sleepable: touches the pages of the user strings the point's own program
 * is about to read (attached after it, it runs before it: a uprobe's
 * consumers run newest first), faulting in a page the process has not
 * touched yet, as at a string's first use, which that program, unable to
 * fault, would find missing. Only where the kernel has sleepable uprobes
 * and the points have cookies. */
static __always_inline int prefault(struct pt_regs *ctx)
{
	__u32 point = bpf_get_attach_cookie(ctx);
	struct tr_probe *p = bpf_map_lookup_elem(&probes, &point);
	__u64 addr;
	char byte;

	/* Every register read first, each kept apart (barrier_var): the
	 * compiler would otherwise pick one by a variable offset into the
	 * context, which the verifier refuses. */
	__u64 a0 = PT_REGS_PARM1(ctx), a1 = PT_REGS_PARM2(ctx), a2 = PT_REGS_PARM3(ctx);
	__u64 a3 = PT_REGS_PARM4(ctx), a4 = PT_REGS_PARM5(ctx), a5 = PT_REGS_PARM6(ctx);
	__u64 rc = PT_REGS_RC(ctx);

	barrier_var(a0);
	barrier_var(a1);
	barrier_var(a2);
	barrier_var(a3);
	barrier_var(a4);
	barrier_var(a5);
	barrier_var(rc);
	__u64 args[TRACE_ARGS] = { a0, a1, a2, a3, a4, a5 };

	if (!p)
		return 0;
	for (int i = 0; i < TRACE_STRS; i++) {
		const struct tr_value *s = &p->strs[i];

		if (i >= p->nstrs)
			break;
		/* An entry's arguments, a return's value. */
		if ((s->source == TR_SRC_RETVAL) != !!p->is_return)
			continue;
		if (s->source == TR_SRC_ARG && s->index < TRACE_ARGS)
			addr = args[s->index];
		else if (s->source == TR_SRC_RETVAL)
			addr = rc;
		else
			continue;
		if (!addr || (__s64)addr < 0)
			continue;
		bpf_copy_from_user(&byte, 1, (void *)addr);
		/* A string that may run into the next page. */
		if ((addr & 4095) + str_bytes > 4096)
			bpf_copy_from_user(&byte, 1, (void *)((addr | 4095) + 1));
	}
	return 0;
}

SEC("uprobe.s")
int tr_prefault(struct pt_regs *ctx)
{
	return prefault(ctx);
}

SEC("uprobe.multi.s")
int tr_prefault_multi(struct pt_regs *ctx)
{
	return prefault(ctx);
}

SEC("uprobe.multi")
int tr_umulti(struct pt_regs *ctx)
{
	return hit(ctx, HOOK_REGS, use_cookie ? bpf_get_attach_cookie(ctx) : lone_uprobe);
}

SEC("uprobe")
int tr_uprobe(struct pt_regs *ctx)
{
	return hit(ctx, HOOK_REGS, use_cookie ? bpf_get_attach_cookie(ctx) : lone_uprobe);
}

/* Returns without cookies (with them, tr_uprobe serves both). */
SEC("uretprobe")
int tr_uretprobe(struct pt_regs *ctx)
{
	return hit(ctx, HOOK_REGS, lone_uretprobe);
}

SEC("kprobe.multi")
int tr_kmulti(struct pt_regs *ctx)
{
	return hit(ctx, HOOK_REGS, use_cookie ? bpf_get_attach_cookie(ctx) : lone_kprobe);
}

SEC("kprobe")
int tr_kprobe(struct pt_regs *ctx)
{
	return hit(ctx, HOOK_REGS, use_cookie ? bpf_get_attach_cookie(ctx) : lone_kprobe);
}

SEC("kretprobe")
int tr_kretprobe(struct pt_regs *ctx)
{
	return hit(ctx, HOOK_REGS, lone_kretprobe);
}

SEC("usdt")
int tr_usdt(struct pt_regs *ctx)
{
	return hit(ctx, HOOK_USDT, bpf_usdt_cookie(ctx));
}

SEC("tracepoint")
int tr_tp(void *ctx)
{
	return hit(ctx, HOOK_TP, use_cookie ? bpf_get_attach_cookie(ctx) : lone_tp);
}

/* The same, for a tracepoint probed again (BCC allows it; the kernel
 * attaches a program once to one tracepoint): with cookies only. */
SEC("tracepoint")
int tr_tp2(void *ctx)
{
	return hit(ctx, HOOK_TP, bpf_get_attach_cookie(ctx));
}

SEC("tracepoint")
int tr_tp3(void *ctx)
{
	return hit(ctx, HOOK_TP, bpf_get_attach_cookie(ctx));
}

SEC("tracepoint")
int tr_tp4(void *ctx)
{
	return hit(ctx, HOOK_TP, bpf_get_attach_cookie(ctx));
}

char LICENSE[] SEC("license") = "GPL";
