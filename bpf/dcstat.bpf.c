// SPDX-License-Identifier: GPL-2.0
/* dcstat: dentry cache lookups, in per-CPU counters the front end reads
 * each interval: a reference for each call of lookup_fast (one path
 * component), a slow lookup for each call of d_lookup or d_alloc_parallel
 * that is not the second half of the same miss, and a miss for each of
 * those that found no dentry (dcache.bpf.h says which are misses).
 *
 * No tracepoint covers the dentry cache: fentry and fexit where the kernel
 * allows, else kprobes and a kretprobe (lookup_fast's attached by the front
 * end, which finds it under a compiler's suffix where it has one). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dcstat.h"
#include "dcache.bpf.h"
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

static __always_inline void fast(void)
{
	if (allowed())
		count(DC_REFS);
}

static __always_inline void looked_up(const void *parent, const struct qstr *name, bool found)
{
	if (!allowed())
		return;
	count(DC_SLOW);
	if (dc_lookup_missed(parent, name, found))
		count(DC_MISS);
}

static __always_inline void allocating(const void *parent, const struct qstr *name)
{
	if (!allowed() || !dc_alloc_missed(parent, name))
		return;
	count(DC_SLOW);
	count(DC_MISS);
}

SEC("fentry/lookup_fast")
int BPF_PROG(dc_fentry_fast) { fast(); return 0; }

SEC("fexit/d_lookup")
int BPF_PROG(dc_fexit_lookup, const struct dentry *parent, const struct qstr *name,
	     struct dentry *ret)
{
	looked_up(parent, name, ret != 0);
	return 0;
}

SEC("fentry/d_alloc_parallel")
int BPF_PROG(dc_fentry_alloc, const struct dentry *parent, const struct qstr *name)
{
	allocating(parent, name);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(dc_kprobe_fast) { fast(); return 0; }

SEC("kprobe/d_lookup")
int BPF_KPROBE(dc_kprobe_lookup, const struct dentry *parent, const struct qstr *name)
{
	if (allowed())
		dc_lookup_enter(parent, name);
	return 0;
}

SEC("kretprobe/d_lookup")
int BPF_KRETPROBE(dc_kretprobe_lookup, void *ret)
{
	struct dc_args a;

	if (dc_lookup_args(&a))
		looked_up((void *)a.parent, (const struct qstr *)a.name, ret != 0);
	return 0;
}

SEC("kprobe/d_alloc_parallel")
int BPF_KPROBE(dc_kprobe_alloc, const struct dentry *parent, const struct qstr *name)
{
	allocating(parent, name);
	return 0;
}

enum dc_stat dc_stat_btf;

char LICENSE[] SEC("license") = "GPL";
