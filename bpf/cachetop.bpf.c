// SPDX-License-Identifier: GPL-2.0
/* cachetop: cachestat's counters per process (pid and uid), in a hash the
 * front end drains each interval. The hooks are pagecache.bpf.h's. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "cachetop.h"

#define MAX_PROCS 10240

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PROCS);
	__type(key, struct proc_key);
	__type(value, struct proc_counts);
} procs SEC(".maps");

/* Pages of processes left out because the table was full (read by the
 * front end, which says so). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} uncounted SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct proc_counts);
} scratch SEC(".maps");

static __always_inline void count(__u32 counter, __u64 n)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct proc_key key = {
		.pid = id >> 32,
		.uid = (__u32)bpf_get_current_uid_gid(),
	};
	struct proc_counts *v;
	__u32 zero = 0;

	if (counter >= CNT_MAX)
		return;
	v = bpf_map_lookup_elem(&procs, &key);
	if (!v) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		struct proc_counts *fresh = bpf_map_lookup_elem(&scratch, &zero);

		if (!fresh)
			return;
		__builtin_memset(fresh, 0, sizeof(*fresh));
		fresh->cgroup_id = bpf_get_current_cgroup_id();
		BPF_CORE_READ_STR_INTO(&fresh->comm, task, group_leader, comm);
		/* Another CPU may have made the row meanwhile: keep its. */
		bpf_map_update_elem(&procs, &key, fresh, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&procs, &key);
		if (!v) {
			__u64 *lost = bpf_map_lookup_elem(&uncounted, &zero);

			if (lost)
				*lost += n;
			return;
		}
	}
	/* The main thread keeps the name current: a forked shell's row is
	 * the command it became (exec). */
	if ((__u32)id == key.pid)
		bpf_get_current_comm(&v->comm, sizeof(v->comm));
	__sync_fetch_and_add(&v->counts[counter], n);
}

#include "pagecache.bpf.h"

char LICENSE[] SEC("license") = "GPL";
