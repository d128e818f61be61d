// SPDX-License-Identifier: GPL-2.0
/* biolatency: block I/O latency, from issue (or from queueing with -Q) to
 * completion, into log2 histograms kept in the kernel.
 *
 * Each hook exists as tp_btf (preferred), raw_tp, and classic tracepoint
 * (no request pointer there: requests are keyed by disk and sector); the
 * front end loads one kind. Completion is block_io_done where the kernel
 * has it, since block_rq_complete fires once per partial completion. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "biolatency.h"
#include "block.h"
#include "bits.bpf.h"
#include "core_fixes.bpf.h"
#include "filters.bpf.h"
#include "maps.bpf.h"

#define REQ_OP_MASK BLK_OP_MASK

const volatile bool per_disk = false;
const volatile bool per_flags = false;
const volatile bool per_container = false;
const volatile bool queued = false;
const volatile bool millis = false;
const volatile bool fine = false;
const volatile bool filter_dev = false;
const volatile __u32 targ_dev = 0;

/* When a request started (0: only its submitter seen yet), the cgroup of
 * the task that submitted it (--per-container; 0 without), and whether
 * that task passed the cgroup filter. */
struct rq_start {
	__u64 ts;
	__u64 cgroup_id;
	__u32 allowed;
	__u32 pad;
};

/* The start hook is loaded without -Q too when a request's submitter
 * matters (--per-container, a cgroup filter): a stacked device's worker
 * may issue it, in a context that is not the submitter's. */
static __always_inline bool submitter_matters(void)
{
	return per_container || filter_cgroup;
}

/* LRU: a request whose completion we never see (block_io_done skips
 * unaccounted ones) must not pin its slot forever. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct request *);
	__type(value, struct rq_start);
} start SEC(".maps");

HIST_MAPS(struct hist_key, struct hist, 4096);

static __always_inline __u32 normalized_flags(__u32 cmd_flags)
{
	__u32 f = cmd_flags & REQ_OP_MASK;

#define FLAG(bit, ours)                                                             \
	if (cmd_flags & (1U << bpf_core_enum_value(enum req_flag_bits, bit)))        \
		f |= ours;
	FLAG(__REQ_SYNC, BIO_SYNC)
	FLAG(__REQ_META, BIO_META)
	FLAG(__REQ_FUA, BIO_FUA)
	FLAG(__REQ_PREFLUSH, BIO_PREFLUSH)
	FLAG(__REQ_RAHEAD, BIO_RAHEAD)
	FLAG(__REQ_BACKGROUND, BIO_BACKGROUND)
	FLAG(__REQ_NOWAIT, BIO_NOWAIT)
#undef FLAG
	return f;
}

/* Records when a request started: queued (-Q) or issued. With -Q a request
 * that skipped the queue (direct issue) is timed from issue instead. The
 * submitter's cgroup and verdict come from the start hook where it saw the
 * request, else from the issuing context (a direct issue is the
 * submitter's). */
static __always_inline int mark_start(struct request *rq, bool from_queue)
{
	struct rq_start st = {}, *seen = 0;

	if (from_queue && !queued) {
		if (submitter_matters()) {
			st.cgroup_id = per_container ? bpf_get_current_cgroup_id() : 0;
			st.allowed = cgroup_allowed();
			bpf_map_update_elem(&start, &rq, &st, BPF_ANY);
		}
		return 0;
	}
	if (!from_queue)
		seen = bpf_map_lookup_elem(&start, &rq);
	/* -Q: timed from the queue already. */
	if (seen && seen->ts)
		return 0;
	if (seen) {
		if (!seen->allowed)
			return 0;
		st.cgroup_id = seen->cgroup_id;
	} else {
		if (!cgroup_allowed())
			return 0;
		st.cgroup_id = per_container ? bpf_get_current_cgroup_id() : 0;
	}
	if (filter_dev && request_dev(rq) != targ_dev)
		return 0;
	st.ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &rq, &st, BPF_ANY);
	return 0;
}

static __always_inline int mark_done(struct request *rq)
{
	struct hist_key key = {};
	struct fine_hist *fh = 0;
	struct rq_start *st;
	struct hist *h;
	__u64 delta;

	st = bpf_map_lookup_elem(&start, &rq);
	if (!st || !st->ts)
		return 0;
	delta = bpf_ktime_get_ns() - st->ts;
	key.cgroup_id = st->cgroup_id;
	bpf_map_delete_elem(&start, &rq);
	if ((__s64)delta < 0)
		return 0;
	delta /= millis ? 1000000 : 1000;
	if (per_disk)
		key.dev = request_dev(rq);
	if (per_flags)
		key.flags = normalized_flags(BPF_CORE_READ(rq, cmd_flags));
	h = lookup_or_try_init(&hists, &key, &zero_hist);
	if (!h)
		return 0;
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &key, &zero_fine);
	hist_add(h, fh, delta);
	return 0;
}

/* Partial completions report fewer bytes than the request has left. */
static __always_inline int mark_complete(struct request *rq, unsigned int nr_bytes)
{
	if (nr_bytes < BPF_CORE_READ(rq, __data_len))
		return 0;
	return mark_done(rq);
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(bio_btf_insert, struct request *rq) { return mark_start(rq, true); }
SEC("tp_btf/block_io_start")
int BPF_PROG(bio_btf_io_start, struct request *rq) { return mark_start(rq, true); }
SEC("tp_btf/block_rq_issue")
int BPF_PROG(bio_btf_issue, struct request *rq) { return mark_start(rq, false); }
SEC("tp_btf/block_io_done")
int BPF_PROG(bio_btf_io_done, struct request *rq) { return mark_done(rq); }
SEC("tp_btf/block_rq_complete")
int BPF_PROG(bio_btf_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return mark_complete(rq, nr_bytes);
}

/* Before 5.11 block_rq_insert and block_rq_issue passed the queue first;
 * the front end loads the form the kernel's BTF describes. */
SEC("tp_btf/block_rq_insert")
int BPF_PROG(bio_btf_insert_q, void *q, struct request *rq) { return mark_start(rq, true); }
SEC("tp_btf/block_rq_issue")
int BPF_PROG(bio_btf_issue_q, void *q, struct request *rq) { return mark_start(rq, false); }
SEC("raw_tp/block_rq_insert")
int BPF_PROG(bio_raw_insert_q, void *q, struct request *rq) { return mark_start(rq, true); }
SEC("raw_tp/block_rq_issue")
int BPF_PROG(bio_raw_issue_q, void *q, struct request *rq) { return mark_start(rq, false); }

SEC("raw_tp/block_rq_insert")
int BPF_PROG(bio_raw_insert, struct request *rq) { return mark_start(rq, true); }
SEC("raw_tp/block_io_start")
int BPF_PROG(bio_raw_io_start, struct request *rq) { return mark_start(rq, true); }
SEC("raw_tp/block_rq_issue")
int BPF_PROG(bio_raw_issue, struct request *rq) { return mark_start(rq, false); }
SEC("raw_tp/block_io_done")
int BPF_PROG(bio_raw_io_done, struct request *rq) { return mark_done(rq); }
SEC("raw_tp/block_rq_complete")
int BPF_PROG(bio_raw_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return mark_complete(rq, nr_bytes);
}

/* Classic tracepoints: a request is known by (disk, start sector). */
struct disk_sector {
	__u32 dev;
	__u32 pad;
	__u64 sector;
};

struct tp_start {
	__u64 ts;
	__u64 cgroup_id;
	__u32 flags;
	__u32 allowed;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct disk_sector);
	__type(value, struct tp_start);
} start_by_sector SEC(".maps");

/* The flags a tracepoint's rwbs string spells: [F]{R|W|D|E|N}[F][A][S][M]. */
static __always_inline __u32 rwbs_flags(const char *rwbs)
{
	__u32 f = 0;
	bool op_seen = false;
	int i;

	for (i = 0; i < 8; i++) {
		switch (rwbs[i]) {
		case 0:
			return f;
		case 'F':
			f |= op_seen ? BIO_FUA : BIO_PREFLUSH;
			if (!op_seen)
				f = (f & ~REQ_OP_MASK) | 2; /* a flush, unless an op follows */
			break;
		case 'R': f = (f & ~REQ_OP_MASK) | 0; op_seen = true; break;
		case 'W': f = (f & ~REQ_OP_MASK) | 1; op_seen = true; break;
		case 'D': f = (f & ~REQ_OP_MASK) | 3; op_seen = true; break;
		case 'E': f = (f & ~REQ_OP_MASK) | 5; op_seen = true; break;
		case 'N': op_seen = true; break;
		case 'A': f |= BIO_RAHEAD; break;
		case 'S': f |= BIO_SYNC; break;
		case 'M': f |= BIO_META; break;
		}
	}
	return f;
}

static __always_inline int tp_mark_start(__u32 dev, __u64 sector, const char *rwbs, bool from_queue)
{
	struct disk_sector key = { .dev = dev, .sector = sector };
	struct tp_start val = {}, *seen = 0;

	/* As mark_start. */
	if (from_queue && !queued) {
		if (submitter_matters()) {
			val.cgroup_id = per_container ? bpf_get_current_cgroup_id() : 0;
			val.allowed = cgroup_allowed();
			bpf_map_update_elem(&start_by_sector, &key, &val, BPF_ANY);
		}
		return 0;
	}
	if (!from_queue)
		seen = bpf_map_lookup_elem(&start_by_sector, &key);
	if (seen && seen->ts)
		return 0;
	if (seen) {
		if (!seen->allowed)
			return 0;
		val.cgroup_id = seen->cgroup_id;
	} else {
		if (!cgroup_allowed())
			return 0;
		val.cgroup_id = per_container ? bpf_get_current_cgroup_id() : 0;
	}
	if (filter_dev && dev != targ_dev)
		return 0;
	/* The context may only be read at constant offsets: copy it out. */
	char flags[8] = {};

	bpf_probe_read_kernel(flags, sizeof(flags) - 1, rwbs);
	val.ts = bpf_ktime_get_ns();
	val.flags = rwbs_flags(flags);
	bpf_map_update_elem(&start_by_sector, &key, &val, BPF_ANY);
	return 0;
}

SEC("tracepoint/block/block_rq_insert")
int bio_tp_insert(struct trace_event_raw_block_rq *ctx)
{
	return tp_mark_start(ctx->dev, ctx->sector, ctx->rwbs, true);
}

SEC("tracepoint/block/block_rq_issue")
int bio_tp_issue(struct trace_event_raw_block_rq *ctx)
{
	return tp_mark_start(ctx->dev, ctx->sector, ctx->rwbs, false);
}

/* A partial completion leaves the rest at a later sector, so only the first
 * completion of a request matches: its latency to the first completion. */
/* The completion event's layout before 5.16 (before block_rq_error shared
 * it): the fields read are the same, the type's name differs. */
struct trace_event_raw_block_rq_complete___old {
	dev_t dev;
	sector_t sector;
} __attribute__((preserve_access_index));

SEC("tracepoint/block/block_rq_complete")
int bio_tp_complete(struct trace_event_raw_block_rq_completion *ctx)
{
	struct trace_event_raw_block_rq_complete___old *old = (void *)ctx;
	struct disk_sector key = {};
	struct hist_key hkey = {};
	struct fine_hist *fh = 0;
	struct tp_start *st;
	struct hist *h;
	__u64 delta;

	/* Read, not loaded from the context: the compiler may merge the two
	 * branches into one context access at a variable offset, which the
	 * verifier refuses. */
	if (bpf_core_type_exists(struct trace_event_raw_block_rq_completion)) {
		key.dev = BPF_CORE_READ(ctx, dev);
		key.sector = BPF_CORE_READ(ctx, sector);
	} else {
		key.dev = BPF_CORE_READ(old, dev);
		key.sector = BPF_CORE_READ(old, sector);
	}
	st = bpf_map_lookup_elem(&start_by_sector, &key);
	if (!st || !st->ts)
		return 0;
	delta = bpf_ktime_get_ns() - st->ts;
	if (per_disk)
		hkey.dev = key.dev;
	if (per_flags)
		hkey.flags = st->flags;
	hkey.cgroup_id = st->cgroup_id;
	bpf_map_delete_elem(&start_by_sector, &key);
	if ((__s64)delta < 0)
		return 0;
	delta /= millis ? 1000000 : 1000;
	h = lookup_or_try_init(&hists, &hkey, &zero_hist);
	if (!h)
		return 0;
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &hkey, &zero_fine);
	hist_add(h, fh, delta);
	return 0;
}

/* Keeps the flag enum in BTF for the front end. */
enum bio_flag bio_flag_btf;

char LICENSE[] SEC("license") = "GPL";
