/* Block requests followed from submission to completion, for the tools that
 * report per request or per submitter (biosnoop, biotop, bitesize): who
 * submitted it, when it started and was issued, its disk, op, sector and
 * size. The tool defines request_done(), called once per completed request.
 *
 * Submitter: block_io_start (6.5+) runs in the submitting task; before it,
 * block_rq_insert does for requests that go through a queue, and
 * block_rq_issue for those issued directly. A request first seen at issue
 * from a kworker (a plug flushed by the block layer) is the kworker's.
 *
 * Sector and size are read at issue: by completion the kernel has advanced
 * them past the data transferred. Completion is block_io_done where the
 * kernel has it, else the final block_rq_complete (it fires once per
 * partial completion).
 *
 * Requests are reused: a record left by an earlier use (a completion the
 * tracepoints skip, a request merged away) is replaced at the request's
 * next start, or at its next issue once it was issued. */
#ifndef __BLKREQ_BPF_H
#define __BLKREQ_BPF_H

#include "block.h"
#include "core_fixes.bpf.h"
#include "filters.bpf.h"
#include "task.bpf.h"

const volatile bool filter_dev = false;
const volatile __u32 targ_dev = 0;

struct blk_req {
	/* The submitter, when it was seen (task_header_now): a record's
	 * header copies it and sets its own time. */
	struct task_header task;
	/* Started (io_start or insert); 0 when first seen at issue. */
	__u64 ts_start;
	/* Issued to the driver; 0 until then. */
	__u64 ts_issue;
	__u64 sector;
	__u32 bytes;
	__u32 dev;
	/* The op (BLK_OP_MASK bits of cmd_flags: 0 read, 1 write, ...). */
	__u32 op;
	/* The submitter's kernel stack, where the tool takes it (biostacks
	 * defines BLK_REQ_STACK(ctx) to its stack map's id); else 0. */
	__s32 stack_id;
};

#ifndef BLK_REQ_STACK
#define BLK_REQ_STACK(ctx) 0
#endif

/* LRU: a request whose completion is never seen must not pin a slot. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct request *);
	__type(value, struct blk_req);
} blk_reqs SEC(".maps");

static int request_done(struct request *rq, struct blk_req *r, __u64 now);

/* The shared filters (-p, -c) apply to the submitter, -d to the disk. */
static __always_inline bool blk_req_wanted(struct request *rq)
{
	if (!cgroup_allowed() || !task_allowed(bpf_get_current_pid_tgid()))
		return false;
	return !filter_dev || request_dev(rq) == targ_dev;
}

/* io_start or insert (only one of them is loaded): a new use of the
 * request, whatever an earlier one left (a request merged away is freed
 * without being issued). */
static __always_inline int blk_req_start(void *ctx, struct request *rq)
{
	struct blk_req r = {};

	if (!blk_req_wanted(rq)) {
		bpf_map_delete_elem(&blk_reqs, &rq);
		return 0;
	}
	task_header_now(&r.task);
	r.ts_start = r.task.ts_ns;
	r.stack_id = BLK_REQ_STACK(ctx);
	bpf_map_update_elem(&blk_reqs, &rq, &r, BPF_ANY);
	return 0;
}

static __always_inline int blk_req_issue(void *ctx, struct request *rq)
{
	struct blk_req *r = bpf_map_lookup_elem(&blk_reqs, &rq);
	struct blk_req fresh = {};

	if (!r || r->ts_issue) {
		/* Issued without a start we saw: the issuing task submitted it. */
		if (!blk_req_wanted(rq)) {
			if (r)
				bpf_map_delete_elem(&blk_reqs, &rq);
			return 0;
		}
		task_header_now(&fresh.task);
		fresh.stack_id = BLK_REQ_STACK(ctx);
		r = &fresh;
	}
	r->ts_issue = bpf_ktime_get_ns();
	r->sector = BPF_CORE_READ(rq, __sector);
	r->bytes = BPF_CORE_READ(rq, __data_len);
	r->dev = request_dev(rq);
	r->op = BPF_CORE_READ(rq, cmd_flags) & BLK_OP_MASK;
	if (r == &fresh)
		bpf_map_update_elem(&blk_reqs, &rq, &fresh, BPF_ANY);
	return 0;
}

static __always_inline int blk_req_done(struct request *rq)
{
	struct blk_req *r = bpf_map_lookup_elem(&blk_reqs, &rq);

	if (!r || !r->ts_issue)
		return 0;
	request_done(rq, r, bpf_ktime_get_ns());
	bpf_map_delete_elem(&blk_reqs, &rq);
	return 0;
}

/* Partial completions report fewer bytes than the request has left. */
static __always_inline int blk_req_complete(struct request *rq, unsigned int nr_bytes)
{
	if (nr_bytes < BPF_CORE_READ(rq, __data_len))
		return 0;
	return blk_req_done(rq);
}

/* Each hook as tp_btf and raw_tp (same code; the front end loads one
 * kind); before 5.11 block_rq_insert and block_rq_issue passed the queue
 * first (the _q forms). common::kernel::disks chooses among them. */
#define BLK_REQ_PROGRAMS(kind, sec)                                                          \
	SEC(sec "/block_io_start")                                                         \
	int BPF_PROG(blk_##kind##_io_start, struct request *rq) { return blk_req_start(ctx, rq); } \
	SEC(sec "/block_rq_insert")                                                        \
	int BPF_PROG(blk_##kind##_insert, struct request *rq) { return blk_req_start(ctx, rq); }   \
	SEC(sec "/block_rq_insert")                                                        \
	int BPF_PROG(blk_##kind##_insert_q, void *q, struct request *rq)                     \
	{                                                                                    \
		return blk_req_start(ctx, rq);                                                  \
	}                                                                                    \
	SEC(sec "/block_rq_issue")                                                         \
	int BPF_PROG(blk_##kind##_issue, struct request *rq) { return blk_req_issue(ctx, rq); }   \
	SEC(sec "/block_rq_issue")                                                         \
	int BPF_PROG(blk_##kind##_issue_q, void *q, struct request *rq)                      \
	{                                                                                    \
		return blk_req_issue(ctx, rq);                                                  \
	}                                                                                    \
	SEC(sec "/block_io_done")                                                          \
	int BPF_PROG(blk_##kind##_io_done, struct request *rq) { return blk_req_done(rq); }  \
	SEC(sec "/block_rq_complete")                                                      \
	int BPF_PROG(blk_##kind##_complete, struct request *rq, int error, unsigned int nr_bytes) \
	{                                                                                    \
		return blk_req_complete(rq, nr_bytes);                                     \
	}

BLK_REQ_PROGRAMS(btf, "tp_btf")
BLK_REQ_PROGRAMS(raw, "raw_tp")

#endif
