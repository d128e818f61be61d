// SPDX-License-Identifier: GPL-2.0
/* cachestat: page cache accesses, additions (misses) and dirtied pages,
 * counted per CPU, system-wide or for -p's processes. The hooks are
 * pagecache.bpf.h's. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "pagecache.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void count(__u32 counter, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counts, &counter);

	if (c)
		*c += n;
}

#include "pagecache.bpf.h"

char LICENSE[] SEC("license") = "GPL";
