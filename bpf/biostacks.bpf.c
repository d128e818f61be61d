// SPDX-License-Identifier: GPL-2.0
/* biostacks: block I/O latency by the kernel stack that submitted it.
 *
 * blkreq.bpf.h follows each request from its start to its completion, and
 * takes the submitter's kernel stack where it takes the submitter: at
 * block_io_start (6.5+), else at block_rq_insert, or at block_rq_issue for
 * a request issued without a start seen (a direct issue). At completion,
 * the time from start (else issue) goes into a log2 histogram by process,
 * disk and stack (`stack_hists`), and into the stack kind's sum
 * (stackcounts.bpf.h's `counts`, in ns: folded lines, flame graphs, pprof). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "biostacks.h"
#include "hist.h"
#include "bits.bpf.h"
#include "maps.bpf.h"
#include "errors.bpf.h"
/* No user stacks: no copies to send. */
#define RINGBUF_BYTES 4096
#include "stackcounts.bpf.h"
#define BLK_REQ_STACK(ctx) (kernel_stacks ? (__s32)stack_id_or_none(ctx, &stackmap, 0) : -1)
#include "blkreq.bpf.h"

/* -m: the histograms' slots in milliseconds, else microseconds. */
const volatile bool millis = false;

/* As many keys as `counts` (stackcounts.bpf.h), allocated as they come:
 * a histogram is 144 bytes, and these programs never run in NMI context. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct stack_key);
	__type(value, struct hist);
} stack_hists SEC(".maps");

static const struct hist zero_hist;

static int request_done(struct request *rq, struct blk_req *r, __u64 now)
{
	__u64 start = r->ts_start ? r->ts_start : r->ts_issue;
	struct stack_key key;
	struct hist *h;
	__u64 delta;

	if (now < start)
		return 0;
	delta = now - start;
	__builtin_memset(&key, 0, sizeof(key));
	key.tgid = r->task.pid;
	key.kern_stack_id = r->stack_id;
	key.user_stack_id = -1;
	__builtin_memcpy(key.comm, r->task.comm, sizeof(key.comm));
	if (per_container)
		key.cgroup_id = r->task.cgroup_id;
	key.dev = r->dev;
	h = lookup_or_try_init(&stack_hists, &key, &zero_hist);
	if (!h) {
		count_error(ERR_STACK_COUNTS_FULL);
		return 0;
	}
	/* The slots in the unit, the total in ns (nothing lost to each I/O's
	 * truncation; the front end divides it). */
	hist_add_exact_total(h, 0, delta, millis ? 1000000 : 1000);
	count_stacks(&key, 0, delta);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
