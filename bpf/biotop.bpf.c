// SPDX-License-Identifier: GPL-2.0
/* biotop: block I/O per submitting process, disk and op, summed in the
 * kernel and read (drained) by the front end each interval. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "biotop.h"
#include "blkreq.bpf.h"
#include "maps.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct who_key);
	__type(value, struct io_total);
} totals SEC(".maps");

static struct io_total zero_total;

static int request_done(struct request *rq, struct blk_req *r, __u64 now)
{
	struct who_key key = {};
	struct io_total *t;

	key.pid = r->task.pid;
	key.dev = r->dev;
	key.op = r->op;
	__builtin_memcpy(key.comm, r->task.comm, sizeof(key.comm));
	t = lookup_or_try_init(&totals, &key, &zero_total);
	if (!t)
		return 0;
	t->cgroup_id = r->task.cgroup_id;
	__sync_fetch_and_add(&t->bytes, r->bytes);
	__sync_fetch_and_add(&t->latency_ns, now - r->ts_issue);
	__sync_fetch_and_add(&t->ios, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
