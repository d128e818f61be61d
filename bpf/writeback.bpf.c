// SPDX-License-Identifier: GPL-2.0
/* writeback: each round of the kernel's writeback of dirty pages, from the
 * writeback_start tracepoint to writeback_written (both in wb_writeback()'s
 * loop, in the worker's thread): the device, the reason, the pages written
 * and how long it took. tp_btf, else raw_tp, on the same arguments. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "writeback.h"
#include "events.bpf.h"
#include "task.bpf.h"

/* Rounds shorter than this are left out (-m). */
const volatile __u64 min_ns = 0;
/* -c: only the rounds of this cgroup's dirty pages (or its descendants'). */
const volatile __u64 targ_cgroup_id = 0;

struct start {
	__u64 ts;
	/* The work's budget of pages as the round starts. */
	__s64 nr_pages;
};

/* By thread; LRU: a worker that never reaches the round's end (a kernel
 * that drops the event) leaves its entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct start);
} starts SEC(".maps");

struct event event_layout = {};

/* Before 5.9 the device's name was its struct device's. */
struct backing_dev_info___old {
	struct device *dev;
} __attribute__((preserve_access_index));

static __always_inline int round_started(struct wb_writeback_work *work)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct start s = {
		.ts = bpf_ktime_get_ns(),
		.nr_pages = BPF_CORE_READ(work, nr_pages),
	};

	bpf_map_update_elem(&starts, &tid, &s, BPF_ANY);
	return 0;
}

static __always_inline int round_written(struct bdi_writeback *wb, struct wb_writeback_work *work)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct backing_dev_info *bdi;
	struct start *s;
	struct cgroup *wb_cgroup = NULL;
	struct event e;

	s = bpf_map_lookup_elem(&starts, &tid);
	if (!s)
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	e.latency_ns = bpf_ktime_get_ns() - s->ts;
	e.pages = s->nr_pages - BPF_CORE_READ(work, nr_pages);
	bpf_map_delete_elem(&starts, &tid);
	if (e.latency_ns < min_ns)
		return 0;
	if (bpf_core_field_exists(wb->memcg_css))
		wb_cgroup = BPF_CORE_READ(wb, memcg_css, cgroup);
	if (targ_cgroup_id && !(wb_cgroup && cgroup_in(wb_cgroup, targ_cgroup_id)))
		return 0;
	task_header_now(&e.task);
	if (wb_cgroup)
		e.task.cgroup_id = BPF_CORE_READ(wb_cgroup, kn, id);
	e.reason = BPF_CORE_READ(work, reason);
	e.sync_mode = BPF_CORE_READ(work, sync_mode);
	bdi = BPF_CORE_READ(wb, bdi);
	if (bpf_core_field_exists(bdi->dev_name)) {
		BPF_CORE_READ_STR_INTO(&e.device, bdi, dev_name);
	} else {
		const char *name = BPF_CORE_READ((struct backing_dev_info___old *)bdi, dev,
						 kobj.name);

		bpf_probe_read_kernel_str(e.device, sizeof(e.device), name);
	}
	emit(&e, sizeof(e));
	return 0;
}

SEC("tp_btf/writeback_start")
int BPF_PROG(wb_btf_start, struct bdi_writeback *wb, struct wb_writeback_work *work)
{
	return round_started(work);
}

SEC("tp_btf/writeback_written")
int BPF_PROG(wb_btf_written, struct bdi_writeback *wb, struct wb_writeback_work *work)
{
	return round_written(wb, work);
}

SEC("raw_tp/writeback_start")
int BPF_PROG(wb_raw_start, struct bdi_writeback *wb, struct wb_writeback_work *work)
{
	return round_started(work);
}

SEC("raw_tp/writeback_written")
int BPF_PROG(wb_raw_written, struct bdi_writeback *wb, struct wb_writeback_work *work)
{
	return round_written(wb, work);
}

char LICENSE[] SEC("license") = "GPL";
