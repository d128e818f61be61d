// SPDX-License-Identifier: GPL-2.0
/* slabratetop: slab cache allocations and their bytes per interval, by
 * cache. From the kmem:kmem_cache_alloc tracepoint, which passes the
 * kmem_cache since Linux 6.1 (tp_btf or raw_tp); else a kprobe (or fentry)
 * on kmem_cache_alloc, as libbpf-tools' slabratetop; else the tracepoint
 * of before 6.1 (and kmem_cache_alloc_node), by the allocation's call site
 * and its bytes. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "slabratetop.h"
#include "maps.bpf.h"
#include "filters.bpf.h"

const volatile bool by_cgroup = false;

struct slab_key key_layout = {};
struct slab_total total_layout = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct slab_key);
	__type(value, struct slab_total);
} totals SEC(".maps");

static const struct slab_total zero;

static __always_inline struct slab_total *total_of(struct slab_key *key)
{
	if (!task_allowed(bpf_get_current_pid_tgid()) || !cgroup_allowed())
		return 0;
	if (by_cgroup)
		key->cgroup_id = bpf_get_current_cgroup_id();
	return lookup_or_try_init(&totals, key, &zero);
}

static __always_inline int by_cache(struct kmem_cache *s)
{
	struct slab_key key = { .cache = (__u64)s };
	struct slab_total *t = total_of(&key);

	if (!t)
		return 0;
	if (!t->name[0])
		bpf_probe_read_kernel_str(t->name, sizeof(t->name), BPF_CORE_READ(s, name));
	__sync_fetch_and_add(&t->count, 1);
	__sync_fetch_and_add(&t->bytes, BPF_CORE_READ(s, size));
	return 0;
}

static __always_inline int by_site(__u64 call_site, __u64 bytes)
{
	struct slab_key key = { .call_site = call_site };
	struct slab_total *t = total_of(&key);

	if (!t)
		return 0;
	__sync_fetch_and_add(&t->count, 1);
	__sync_fetch_and_add(&t->bytes, bytes);
	return 0;
}

/* 6.1+: (call_site, ptr, s, gfp_flags, node). */
SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(cache_btf, unsigned long call_site, const void *ptr, struct kmem_cache *s)
{
	return by_cache(s);
}

SEC("raw_tp/kmem_cache_alloc")
int BPF_PROG(cache_raw, unsigned long call_site, const void *ptr, struct kmem_cache *s)
{
	return by_cache(s);
}

/* libbpf-tools' hook, attached by the front end to kmem_cache_alloc or
 * kmem_cache_alloc_noprof (6.10+). */
SEC("kprobe")
int BPF_KPROBE(cache_kprobe, struct kmem_cache *s)
{
	return by_cache(s);
}

/* Before 6.1: (call_site, ptr, bytes_req, bytes_alloc, gfp_flags[, node]). */
SEC("raw_tp/kmem_cache_alloc")
int BPF_PROG(site_raw, unsigned long call_site, const void *ptr, size_t bytes_req,
	     size_t bytes_alloc)
{
	return by_site(call_site, bytes_alloc);
}

SEC("raw_tp/kmem_cache_alloc_node")
int BPF_PROG(site_node_raw, unsigned long call_site, const void *ptr, size_t bytes_req,
	     size_t bytes_alloc)
{
	return by_site(call_site, bytes_alloc);
}

char LICENSE[] SEC("license") = "GPL";
