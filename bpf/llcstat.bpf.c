// SPDX-License-Identifier: GPL-2.0
/* llcstat: last-level cache references and misses by process and CPU,
 * sampled: a hardware event per CPU for each (PERF_COUNT_HW_CACHE_REFERENCES,
 * _MISSES), overflowing every sample_period events into these programs,
 * which credit the task on the CPU with that period. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "llcstat.h"
#include "maps.bpf.h"
#include "filters.bpf.h"

const volatile bool per_thread = false;
const volatile bool by_cgroup = false;

struct llc_key key_layout = {};
struct llc_counts counts_layout = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct llc_key);
	__type(value, struct llc_counts);
} counts SEC(".maps");

static __always_inline int count(struct bpf_perf_event_data *ctx, bool miss)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct llc_counts zero = {}, *c;
	struct llc_key key = {
		.pid = id >> 32,
		.cpu = bpf_get_smp_processor_id(),
	};

	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	if (per_thread)
		key.tid = id;
	if (by_cgroup)
		key.cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(&key.comm, sizeof(key.comm));
	c = lookup_or_try_init(&counts, &key, &zero);
	if (!c)
		return 0;
	if (miss)
		__sync_fetch_and_add(&c->misses, ctx->sample_period);
	else
		__sync_fetch_and_add(&c->references, ctx->sample_period);
	return 0;
}

SEC("perf_event")
int on_reference(struct bpf_perf_event_data *ctx)
{
	return count(ctx, false);
}

SEC("perf_event")
int on_miss(struct bpf_perf_event_data *ctx)
{
	return count(ctx, true);
}

char LICENSE[] SEC("license") = "GPL";
