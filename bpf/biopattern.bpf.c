// SPDX-License-Identifier: GPL-2.0
/* biopattern: random against sequential block I/O per disk. Each
 * completion (block_rq_complete: tp_btf, raw_tp or the classic tracepoint)
 * is sequential when it starts at the sector the disk's previous completion
 * ended at, else random; a disk's first completion only sets where it
 * ended (as BCC's and libbpf-tools' do). Counts are running totals, kept
 * across intervals, so that a stream that spans an interval's end stays
 * sequential. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "biopattern.h"
#include "block.h"
#include "core_fixes.bpf.h"

const volatile bool filter_dev = false;
const volatile __u32 targ_dev = 0;

struct pattern pattern_layout = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct pattern);
} patterns SEC(".maps");

static __always_inline int completed(__u32 dev, __u64 sector, __u32 nr_sector)
{
	struct pattern *p, fresh = {};

	if (filter_dev && dev != targ_dev)
		return 0;
	p = bpf_map_lookup_elem(&patterns, &dev);
	if (!p) {
		fresh.next_sector = sector + nr_sector;
		bpf_map_update_elem(&patterns, &dev, &fresh, BPF_NOEXIST);
		return 0;
	}
	if (p->next_sector == sector)
		__sync_fetch_and_add(&p->sequential, 1);
	else
		__sync_fetch_and_add(&p->random, 1);
	__sync_fetch_and_add(&p->bytes, (__u64)nr_sector * 512);
	p->next_sector = sector + nr_sector;
	return 0;
}

/* The request's position at the tracepoint (blk_rq_pos) and the bytes this
 * completion covers, as the classic tracepoint records them. */
static __always_inline int rq_completed(struct request *rq, unsigned int nr_bytes)
{
	return completed(request_dev(rq), BPF_CORE_READ(rq, __sector), nr_bytes >> 9);
}

/* tp_btf: the request is a trusted pointer, its fields read with direct
 * loads (a probe-read helper call each cost twice the rest of the
 * program). */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(bp_btf_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	struct request___pre517 *old = (void *)rq;
	struct gendisk *disk;
	__u32 dev = 0;

	if (bpf_core_field_exists(old->rq_disk))
		disk = old->rq_disk;
	else
		disk = rq->q->disk;
	if (disk)
		dev = (disk->major << BLK_MINORBITS) | disk->first_minor;
	return completed(dev, rq->__sector, nr_bytes >> 9);
}

SEC("raw_tp/block_rq_complete")
int BPF_PROG(bp_raw_complete, struct request *rq, int error, unsigned int nr_bytes)
{
	return rq_completed(rq, nr_bytes);
}

/* The classic event's record before 5.16 (before block_rq_error shared
 * it): the fields read are the same, the type's name differs. */
struct trace_event_raw_block_rq_complete___old {
	dev_t dev;
	sector_t sector;
	unsigned int nr_sector;
} __attribute__((preserve_access_index));

SEC("tracepoint/block/block_rq_complete")
int bp_tp_complete(struct trace_event_raw_block_rq_completion *ctx)
{
	struct trace_event_raw_block_rq_complete___old *old = (void *)ctx;

	/* Read, not loaded from the context: the compiler may merge the two
	 * branches into one context access at a variable offset, which the
	 * verifier refuses. */
	if (bpf_core_type_exists(struct trace_event_raw_block_rq_completion))
		return completed(BPF_CORE_READ(ctx, dev), BPF_CORE_READ(ctx, sector),
				 BPF_CORE_READ(ctx, nr_sector));
	return completed(BPF_CORE_READ(old, dev), BPF_CORE_READ(old, sector),
			 BPF_CORE_READ(old, nr_sector));
}

char LICENSE[] SEC("license") = "GPL";
