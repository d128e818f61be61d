// SPDX-License-Identifier: GPL-2.0
/* capable: capability checks, each with its verdict. Where the kernel
 * allows fentry, one fexit program on cap_capable() sees everything: the
 * capability, the check's options (audited or not, a set-id check) and the
 * result; with kprobes, the options (and stacks) at entry and the result at
 * return.
 * Else the capability:cap_capable tracepoint (6.14+), which passes the
 * result but not the options: AUDIT and INSETID are unknown there. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "capable.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "callstash.bpf.h"

/* include/linux/security.h's option bits (5.1+). */
#define CAP_OPT_NOAUDIT (1U << 1)
#define CAP_OPT_INSETID (1U << 2)

/* Set by the front end. */
const volatile bool non_audit_too = false;
const volatile __u32 unique_by = UNIQUE_OFF;
/* Bytes of each stack to take (-K, -U, --perf-max-stack-depth); 0: none. */
const volatile __u32 kstack_bytes = 0;
const volatile __u32 ustack_bytes = 0;

struct event event_layout = {};
struct unique_key unique_layout = {};
enum cap_limits limits_btf;
enum cap_flags flags_btf;
enum cap_unique unique_btf;

/* Too big for the BPF stack with its stacks. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct event);
} scratch SEC(".maps");

/* --unique without stacks: the checks already reported. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct unique_key);
	__type(value, __u8);
} seen SEC(".maps");

/* Whether this check was reported before (--unique); marks it reported. */
static __always_inline bool repeated(__s32 cap, __u64 id)
{
	struct unique_key k = { .cap = cap };
	__u8 one = 1;

	if (unique_by == UNIQUE_OFF || kstack_bytes || ustack_bytes)
		return false;
	k.who = unique_by == UNIQUE_CGROUP ? bpf_get_current_cgroup_id() : id >> 32;
	return bpf_map_update_elem(&seen, &k, &one, BPF_NOEXIST) != 0;
}

/* Stacks taken at a kprobe's entry, for its return (a kretprobe's own are
 * cut short at the return trampoline before 5.15). Sized by the front end:
 * 1 entry unless the kprobes take stacks. */
struct entry_stacks {
	__u16 kframes;
	__u16 uframes;
	__u32 pad;
	__u64 k[CAP_STACK_DEPTH];
	__u64 u[CAP_STACK_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct entry_stacks);
} stashed_stacks SEC(".maps");

static const struct entry_stacks no_stacks;

static __always_inline void take_stacks(void *ctx, __u64 *k, __u16 *kframes, __u64 *u,
					__u16 *uframes)
{
	long n;

	if (kstack_bytes) {
		n = bpf_get_stack(ctx, k, kstack_bytes, 0);
		*kframes = n > 0 ? n / sizeof(__u64) : 0;
	}
	if (ustack_bytes) {
		n = bpf_get_stack(ctx, u, ustack_bytes, BPF_F_USER_STACK);
		*uframes = n > 0 ? n / sizeof(__u64) : 0;
	}
}

/* `pre`: the stacks taken at entry; else they are taken here. */
static __always_inline int report(void *ctx, __s32 cap, __s32 ret, __u32 flags,
				  struct entry_stacks *pre)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0;
	struct event *e;

	if ((flags & CAP_OPTS_KNOWN) && !(flags & CAP_AUDITED) && !non_audit_too)
		return 0;
	if (!task_allowed(id) || !cgroup_allowed() || repeated(cap, id))
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	task_header_now(&e->task);
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->cap = cap;
	e->ret = ret;
	e->flags = flags;
	e->kstack_frames = 0;
	e->ustack_frames = 0;
	if (!kstack_bytes && !ustack_bytes) {
		emit(e, offsetof(struct event, kstack));
		return 0;
	}
	if (pre) {
		bpf_probe_read_kernel(e->kstack, sizeof(e->kstack), pre->k);
		bpf_probe_read_kernel(e->ustack, sizeof(e->ustack), pre->u);
		e->kstack_frames = pre->kframes;
		e->ustack_frames = pre->uframes;
	} else {
		take_stacks(ctx, e->kstack, &e->kstack_frames, e->ustack, &e->ustack_frames);
	}
	emit(e, sizeof(*e));
	return 0;
}

static __always_inline __u32 opts_flags(unsigned int opts)
{
	__u32 flags = CAP_OPTS_KNOWN;

	if (!(opts & CAP_OPT_NOAUDIT))
		flags |= CAP_AUDITED;
	if (opts & CAP_OPT_INSETID)
		flags |= CAP_INSETID;
	return flags;
}

SEC("fexit/cap_capable")
int BPF_PROG(cap_fexit, const struct cred *cred, struct user_namespace *ns, int cap,
	     unsigned int opts, int ret)
{
	return report(ctx, cap, ret, opts_flags(opts), 0);
}

struct check {
	__s32 cap;
	__u32 opts;
};

CALL_STASH(struct check)

SEC("kprobe/cap_capable")
int BPF_KPROBE(cap_kprobe, const struct cred *cred, struct user_namespace *ns, int cap,
	       unsigned int opts)
{
	struct check c = { .cap = cap, .opts = opts };
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct entry_stacks *st;

	if (kstack_bytes || ustack_bytes) {
		bpf_map_update_elem(&stashed_stacks, &tid, &no_stacks, BPF_ANY);
		st = bpf_map_lookup_elem(&stashed_stacks, &tid);
		if (st)
			take_stacks(ctx, st->k, &st->kframes, st->u, &st->uframes);
	}
	return stash_call(&c);
}

SEC("kretprobe/cap_capable")
int BPF_KRETPROBE(cap_kretprobe, int ret)
{
	struct check c;

	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct entry_stacks *st = 0;
	int r;

	if (!take_call(&c))
		return 0;
	if (kstack_bytes || ustack_bytes)
		st = bpf_map_lookup_elem(&stashed_stacks, &tid);
	r = report(ctx, c.cap, ret, opts_flags(c.opts), st);
	if (st)
		bpf_map_delete_elem(&stashed_stacks, &tid);
	return r;
}

SEC("tp_btf/cap_capable")
int BPF_PROG(cap_btf, const struct cred *cred, struct user_namespace *target_ns,
	     const struct user_namespace *capable_ns, int cap, int ret)
{
	return report(ctx, cap, ret, 0, 0);
}

SEC("raw_tp/cap_capable")
int BPF_PROG(cap_raw, const struct cred *cred, struct user_namespace *target_ns,
	     const struct user_namespace *capable_ns, int cap, int ret)
{
	return report(ctx, cap, ret, 0, 0);
}

SEC("tracepoint/capability/cap_capable")
int cap_tp(struct trace_event_raw_cap_capable *ctx)
{
	return report(ctx, ctx->cap, ctx->ret, 0, 0);
}

char LICENSE[] SEC("license") = "GPL";
