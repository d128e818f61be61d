// SPDX-License-Identifier: GPL-2.0
/* compactsnoop: each memory compaction of a zone, from its start to its end
 * (compaction:mm_compaction_begin and mm_compaction_end, whose records are
 * the same on every kernel), with what the suitability check before it
 * said (mm_compaction_suitable as tp_btf or raw_tp, which passes the zone:
 * its node, index, watermarks and free pages) and the order asked for.
 * Compaction of a whole zone (/proc/sys/vm/compact_memory, proactive
 * compaction) has no such check: order -1, which BCC's compactsnoop does
 * not show. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "compactsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"

/* -e: the zone's watermarks and free pages. */
const volatile bool extended = false;
/* -K: bytes of kernel stack to take; 0: none. */
const volatile __u32 kstack_bytes = 0;

struct event event_layout = {};
enum compact_limits limits_layout;

/* include/linux/compaction.h's COMPACT_CONTINUE (enum compact_result). */
#define CONTINUE_STATUS 4

/* A compaction under way, by thread: what its check said, since when. */
struct pending {
	__u64 ts;
	__u64 zone_start;
	__u64 min, low, high, free;
	char zone_name[ZONE_NAME_MAX];
	__s32 nid;
	__s32 order;
	__s32 fragindex;
	/* The kretprobe's figure, for the check that follows it. */
	__s32 frag_next;
	__u32 sync;
	__u32 pad;
	/* The check's zone_start: a check not followed by a compaction of
	 * that zone (kswapd asks too) is not the next compaction's. */
	__u64 checked_start;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct pending);
} pending SEC(".maps");

/* Too big for the BPF stack with its kernel stack: one per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct event);
} scratch SEC(".maps");

static const struct pending fresh = {
	.nid = -1, .order = -1, .fragindex = FRAG_UNKNOWN,
	.frag_next = FRAG_UNKNOWN,
};

static __always_inline __u32 tid_of(__u64 id)
{
	return (__u32)id;
}

static __always_inline struct pending *pending_of(__u32 tid)
{
	struct pending *p = bpf_map_lookup_elem(&pending, &tid);

	if (p)
		return p;
	bpf_map_update_elem(&pending, &tid, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&pending, &tid);
}

static __always_inline int on_suitable(struct zone *zone, int order, int ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pglist_data *pgdat;
	struct pending *p;
	__s32 frag;

	if (ret != CONTINUE_STATUS || !task_allowed(id) || !cgroup_allowed())
		return 0;
	p = pending_of(tid_of(id));
	if (!p)
		return 0;
	/* The kretprobe's figure came just before, for this check. */
	frag = p->frag_next;
	*p = fresh;
	p->fragindex = frag;
	p->order = order;
	p->checked_start = BPF_CORE_READ(zone, zone_start_pfn);
	pgdat = BPF_CORE_READ(zone, zone_pgdat);
	p->nid = BPF_CORE_READ(pgdat, node_id);
	bpf_probe_read_kernel_str(p->zone_name, sizeof(p->zone_name), BPF_CORE_READ(zone, name));
	if (extended) {
		__u64 wmark[3] = {}, boost = 0;

		bpf_probe_read_kernel(&wmark, sizeof(wmark), &zone->_watermark);
		if (bpf_core_field_exists(zone->watermark_boost))
			boost = BPF_CORE_READ(zone, watermark_boost);
		p->min = wmark[0] + boost;
		p->low = wmark[1] + boost;
		p->high = wmark[2] + boost;
		/* vm_stat[NR_FREE_PAGES]: the enum's first member. */
		p->free = BPF_CORE_READ(zone, vm_stat[0].counter);
	}
	return 0;
}

SEC("tp_btf/mm_compaction_suitable")
int BPF_PROG(suitable_btf, struct zone *zone, int order, int ret)
{
	return on_suitable(zone, order, ret);
}

SEC("raw_tp/mm_compaction_suitable")
int BPF_PROG(suitable_raw, struct zone *zone, int order, int ret)
{
	return on_suitable(zone, order, ret);
}

/* -e where kprobes are: the fragmentation index of the check that
 * follows, as BCC's. */
SEC("kretprobe/fragmentation_index")
int BPF_KRETPROBE(fragindex_ret, int ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pending *p;

	if (!task_allowed(id))
		return 0;
	p = pending_of(tid_of(id));
	if (p)
		p->frag_next = ret;
	return 0;
}

/* The begin and end records, as every kernel since 4.1 lays them out (read
 * directly: a tracepoint's context takes no relocated loads). */
struct begin_record {
	__u64 common;
	unsigned long zone_start;
	unsigned long migrate_pfn;
	unsigned long free_pfn;
	unsigned long zone_end;
	bool sync;
};

struct end_record {
	__u64 common;
	unsigned long zone_start;
	unsigned long migrate_pfn;
	unsigned long free_pfn;
	unsigned long zone_end;
	bool sync;
	int status;
};

SEC("tracepoint/compaction/mm_compaction_begin")
int compaction_begin(struct begin_record *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct pending *p;

	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	p = pending_of(tid_of(id));
	if (!p)
		return 0;
	/* No check of this zone just before: the whole zone is compacted. */
	if (p->checked_start != ctx->zone_start || p->ts)
		*p = fresh;
	p->zone_start = ctx->zone_start;
	p->sync = ctx->sync;
	p->ts = bpf_ktime_get_ns();
	return 0;
}

SEC("tracepoint/compaction/mm_compaction_end")
int compaction_end(struct end_record *ctx)
{
	__u64 now = bpf_ktime_get_ns(), id = bpf_get_current_pid_tgid();
	__u32 tid = tid_of(id), zero = 0;
	struct pending *p = bpf_map_lookup_elem(&pending, &tid);
	struct event *e;
	long n;

	if (!p || !p->ts)
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		goto done;
	task_header_now(&e->task);
	e->latency_ns = now - p->ts;
	e->zone_start = p->zone_start;
	e->nid = p->nid;
	__builtin_memcpy(e->zone_name, p->zone_name, sizeof(e->zone_name));
	e->order = p->order;
	e->status = ctx->status;
	e->min = p->min;
	e->low = p->low;
	e->high = p->high;
	e->free = p->free;
	e->fragindex = p->fragindex;
	e->sync = p->sync;
	e->kstack_frames = 0;
	if (!kstack_bytes) {
		emit(e, offsetof(struct event, kstack));
		goto done;
	}
	n = bpf_get_stack(ctx, e->kstack, kstack_bytes, 0);
	e->kstack_frames = n > 0 ? n / sizeof(__u64) : 0;
	emit(e, sizeof(*e));
done:
	bpf_map_delete_elem(&pending, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
