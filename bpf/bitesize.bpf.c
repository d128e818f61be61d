// SPDX-License-Identifier: GPL-2.0
/* bitesize: block I/O sizes as log2 histograms of Kbytes per submitting
 * process name, kept in the kernel (blkreq.bpf.h follows each request). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "bitesize.h"
#include "hist.h"
#include "bits.bpf.h"
#include "blkreq.bpf.h"
#include "maps.bpf.h"

const volatile bool fine = false;
/* -c: only this name (its first comm_len bytes, BCC's prefix match). */
const volatile bool filter_comm = false;
const volatile char targ_comm[TASK_COMM_LEN] = {};
const volatile __u32 comm_len = 0;

const volatile bool per_container = false;

HIST_MAPS(struct size_key, struct hist, 4096);

static __always_inline bool comm_wanted(const char *comm)
{
	int i;

	if (!filter_comm)
		return true;
	for (i = 0; i < TASK_COMM_LEN; i++) {
		if (i >= comm_len)
			return true;
		if (comm[i] != targ_comm[i])
			return false;
	}
	return true;
}

static int request_done(struct request *rq, struct blk_req *r, __u64 now)
{
	struct size_key key = {};
	struct fine_hist *fh = 0;
	struct hist *h;

	if (!comm_wanted(r->task.comm))
		return 0;
	if (per_container)
		key.cgroup_id = r->task.cgroup_id;
	else
		__builtin_memcpy(key.comm, r->task.comm, sizeof(key.comm));
	h = lookup_or_try_init(&hists, &key, &zero_hist);
	if (!h)
		return 0;
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &key, &zero_fine);
	hist_add(h, fh, r->bytes / 1024);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
