// SPDX-License-Identifier: GPL-2.0
/* biolatency: block I/O latency, from issue (or from queueing with -Q) to
 * completion, into log2 histograms kept in the kernel.
 *
 * Each hook exists as tp_btf (preferred) and raw_tp; the front end loads
 * one kind. Completion is block_io_done where the kernel has it, since
 * block_rq_complete fires once per partial completion. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "biolatency.h"
#include "bits.bpf.h"
#include "core_fixes.bpf.h"
#include "filters.bpf.h"
#include "maps.bpf.h"

#define REQ_OP_MASK 0xff
#define MKDEV(ma, mi) (((ma) << 20) | (mi))

const volatile bool per_disk = false;
const volatile bool per_flags = false;
const volatile bool queued = false;
const volatile bool millis = false;
const volatile bool fine = false;
const volatile bool filter_dev = false;
const volatile __u32 targ_dev = 0;

/* LRU: a request whose completion we never see (block_io_done skips
 * unaccounted ones) must not pin its slot forever. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct request *);
	__type(value, __u64);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct hist_key);
	__type(value, struct hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct hist_key);
	__type(value, struct fine_hist);
} fine_hists SEC(".maps");

static struct hist zero_hist;
static struct fine_hist zero_fine;

static __always_inline __u32 disk_dev(struct request *rq)
{
	struct gendisk *disk = request_disk(rq);

	if (!disk)
		return 0;
	return MKDEV(BPF_CORE_READ(disk, major), BPF_CORE_READ(disk, first_minor));
}

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
 * that skipped the queue (direct issue) is timed from issue instead. */
static __always_inline int mark_start(struct request *rq, bool from_queue)
{
	__u64 ts;

	if (from_queue && !queued)
		return 0;
	if (!cgroup_allowed())
		return 0;
	if (filter_dev && disk_dev(rq) != targ_dev)
		return 0;
	ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &rq, &ts, queued && !from_queue ? BPF_NOEXIST : BPF_ANY);
	return 0;
}

static __always_inline int mark_done(struct request *rq)
{
	struct hist_key key = {};
	struct fine_hist *fh = 0;
	struct hist *h;
	__u64 *tsp, delta;

	tsp = bpf_map_lookup_elem(&start, &rq);
	if (!tsp)
		return 0;
	delta = bpf_ktime_get_ns() - *tsp;
	bpf_map_delete_elem(&start, &rq);
	if ((__s64)delta < 0)
		return 0;
	delta /= millis ? 1000000 : 1000;
	if (per_disk)
		key.dev = disk_dev(rq);
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

char LICENSE[] SEC("license") = "GPL";
