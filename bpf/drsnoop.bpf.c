// SPDX-License-Identifier: GPL-2.0
/* drsnoop: each reclaim a task runs itself, with its latency and the pages
 * it reclaimed: direct reclaim (the page allocator short of free memory)
 * and a memory cgroup's reclaim (the cgroup at its memory.high or
 * memory.max), at the vmscan tracepoints of each one's begin and end. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "drsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"

struct event event_layout = {};
enum reclaim_kind reclaim_kind_layout;

struct start {
	__u64 ts;
	__u64 gfp_flags;
	__s32 order;
	__u32 kind;
};

/* Reclaims under way, by thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct start);
} start SEC(".maps");

static __always_inline void begin(__u32 kind, int order, __u64 gfp_flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct start s = { .gfp_flags = gfp_flags, .order = order, .kind = kind };

	if (!task_allowed(id) || !uid_allowed((__u32)bpf_get_current_uid_gid()) ||
	    !cgroup_allowed())
		return;
	s.ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &tid, &s, BPF_ANY);
}

static __always_inline void end(__u32 kind, __u64 nr_reclaimed)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct start *s = bpf_map_lookup_elem(&start, &tid);
	struct event e = {};

	if (!s || s->kind != kind)
		return;
	task_header_now(&e.task);
	e.task.ts_ns = now;
	e.latency_ns = now - s->ts;
	e.nr_reclaimed = nr_reclaimed;
	e.gfp_flags = s->gfp_flags;
	e.order = s->order;
	e.kind = kind;
	e.uid = (__u32)bpf_get_current_uid_gid();
	bpf_map_delete_elem(&start, &tid);
	emit(&e, sizeof(e));
}

/* Each tracepoint in its three forms: tp_btf, raw_tp, classic. */
#define RECLAIM_BEGIN(tp, kind, name)                                              \
	SEC("tp_btf/" #tp)                                                         \
	int BPF_PROG(name##_btf, int order, gfp_t gfp_flags)                       \
	{                                                                          \
		begin(kind, order, gfp_flags);                                     \
		return 0;                                                          \
	}                                                                          \
	SEC("raw_tp/" #tp)                                                         \
	int BPF_PROG(name##_raw, int order, gfp_t gfp_flags)                       \
	{                                                                          \
		begin(kind, order, gfp_flags);                                     \
		return 0;                                                          \
	}                                                                          \
	SEC("tracepoint/vmscan/" #tp)                                              \
	int name##_tp(struct trace_event_raw_mm_vmscan_direct_reclaim_begin_template *ctx) \
	{                                                                          \
		begin(kind, ctx->order, ctx->gfp_flags);                           \
		return 0;                                                          \
	}

#define RECLAIM_END(tp, kind, name)                                                \
	SEC("tp_btf/" #tp)                                                         \
	int BPF_PROG(name##_btf, unsigned long nr_reclaimed)                       \
	{                                                                          \
		end(kind, nr_reclaimed);                                           \
		return 0;                                                          \
	}                                                                          \
	SEC("raw_tp/" #tp)                                                         \
	int BPF_PROG(name##_raw, unsigned long nr_reclaimed)                       \
	{                                                                          \
		end(kind, nr_reclaimed);                                           \
		return 0;                                                          \
	}                                                                          \
	SEC("tracepoint/vmscan/" #tp)                                              \
	int name##_tp(struct trace_event_raw_mm_vmscan_direct_reclaim_end_template *ctx) \
	{                                                                          \
		end(kind, ctx->nr_reclaimed);                                      \
		return 0;                                                          \
	}

RECLAIM_BEGIN(mm_vmscan_direct_reclaim_begin, RECLAIM_DIRECT, direct_begin)
RECLAIM_END(mm_vmscan_direct_reclaim_end, RECLAIM_DIRECT, direct_end)
RECLAIM_BEGIN(mm_vmscan_memcg_reclaim_begin, RECLAIM_MEMCG, memcg_begin)
RECLAIM_END(mm_vmscan_memcg_reclaim_end, RECLAIM_MEMCG, memcg_end)

char LICENSE[] SEC("license") = "GPL";
