// SPDX-License-Identifier: GPL-2.0
/* biosnoop: one record per completed block request, with the process that
 * submitted it (blkreq.bpf.h follows each request). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "biosnoop.h"
#include "blkreq.bpf.h"
#include "events.bpf.h"

const volatile __u64 min_latency_ns = 0;
const volatile bool pattern = false;

/* -P: the sector after the last request completed on each disk. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u64);
} next_sector SEC(".maps");

static int request_done(struct request *rq, struct blk_req *r, __u64 now)
{
	struct event e = {};
	__u64 end, *next;

	__builtin_memcpy(&e.task, &r->task, sizeof(e.task));
	e.task.ts_ns = now;
	e.latency_ns = now - r->ts_issue;
	e.queue_ns = r->ts_start ? r->ts_issue - r->ts_start : 0;
	e.sector = r->sector;
	e.bytes = r->bytes;
	e.dev = r->dev;
	e.op = r->op;
	if (pattern) {
		next = bpf_map_lookup_elem(&next_sector, &e.dev);
		if (next)
			e.pattern = *next == e.sector ? PATTERN_SEQUENTIAL : PATTERN_RANDOM;
		end = e.sector + e.bytes / 512;
		bpf_map_update_elem(&next_sector, &e.dev, &end, BPF_ANY);
	}
	/* After -P's bookkeeping: a fast request still moves the disk on. */
	if (e.latency_ns < min_latency_ns)
		return 0;
	emit(&e, sizeof(e));
	return 0;
}

/* Keep the record and pattern types in BTF for the front end. */
struct event event_btf;
enum io_pattern io_pattern_btf;

char LICENSE[] SEC("license") = "GPL";
