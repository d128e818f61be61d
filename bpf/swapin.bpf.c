// SPDX-License-Identifier: GPL-2.0
/* swapin: swap-ins by process: each page (folio) read back from swap, at
 * the kernel's swap read (swap_read_folio, swap_readpage before 6.9),
 * which no tracepoint marks: a kprobe, attached by the front end to the
 * function this kernel has. Readahead reads are the faulting task's too. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "swapin.h"
#include "maps.bpf.h"
#include "filters.bpf.h"

const volatile bool by_cgroup = false;

struct swapin_key key_layout = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct swapin_key);
	__type(value, __u64);
} counts SEC(".maps");

SEC("kprobe")
int BPF_KPROBE(swap_read)
{
	__u64 id = bpf_get_current_pid_tgid(), zero = 0, *n;
	struct swapin_key key = { .pid = id >> 32 };

	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	if (by_cgroup)
		key.cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(&key.comm, sizeof(key.comm));
	n = lookup_or_try_init(&counts, &key, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
