// SPDX-License-Identifier: GPL-2.0
/* dcstat: dentry cache lookups, in per-CPU counters the front end reads
 * each interval: a reference for each call of lookup_fast (one path
 * component), a slow lookup for each return of d_lookup, a miss where it
 * found nothing, as BCC counts them.
 *
 * No tracepoint covers the dentry cache: fentry and fexit where the kernel
 * allows, else a kprobe and a kretprobe (attached by the front end, which
 * finds lookup_fast under a compiler's suffix where it has one). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dcstat.h"
#include "filters.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DC_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&stats, &which);

	if (n)
		*n += 1;
}

static __always_inline bool allowed(void)
{
	return task_allowed(bpf_get_current_pid_tgid()) && cgroup_allowed();
}

static __always_inline void looked_up(bool found)
{
	if (!allowed())
		return;
	count(DC_SLOW);
	if (!found)
		count(DC_MISS);
}

SEC("fentry/lookup_fast")
int BPF_PROG(dc_fentry_fast)
{
	if (allowed())
		count(DC_REFS);
	return 0;
}

SEC("fexit/d_lookup")
int BPF_PROG(dc_fexit_lookup, const struct dentry *parent, const struct qstr *name,
	     struct dentry *ret)
{
	looked_up(ret != 0);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(dc_kprobe_fast)
{
	if (allowed())
		count(DC_REFS);
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(dc_kretprobe_lookup, void *ret)
{
	looked_up(ret != 0);
	return 0;
}

enum dc_stat dc_stat_btf;

char LICENSE[] SEC("license") = "GPL";
