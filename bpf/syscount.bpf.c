// SPDX-License-Identifier: GPL-2.0
/* syscount: system calls counted by call (a per-CPU array indexed by the
 * call's number: no hashing, no lock) or by process (-P), with their time
 * (-L). Counting is one program at sys_exit; -L adds one at sys_enter,
 * which keeps the entry time in task local storage (tp_btf, 5.11+) or a
 * hash map by thread (raw_tp). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "syscount.h"
#include "filters.bpf.h"
#include "maps.bpf.h"
#include "syscalls.bpf.h"

/* Set by the front end. */
const volatile bool latency = false;
const volatile bool per_process = false;
const volatile bool failed_only = false;
/* -e: only calls that failed with this errno; 0: any. */
const volatile __s32 errno_only = 0;
/* --syscall: only this call's number; -1: any. */
const volatile __s32 only_nr = -1;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NR_SYSCALLS);
	__type(key, __u32);
	__type(value, struct call_stat);
} stats SEC(".maps");

struct {
	/* LRU: processes come and go; the least recent make room. */
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct pstat);
} by_pid SEC(".maps");

TASK_START_MAPS();

static __always_inline bool wanted(__u64 id)
{
	return task_allowed(id) && cgroup_allowed();
}

static __always_inline void account(long nr, long ret, __u64 ns, __u32 tgid)
{
	struct pstat *p, fresh = {};
	struct call_stat *s;
	__u32 k = nr;

	if (only_nr >= 0 && nr != only_nr)
		return;
	if (failed_only && ret >= 0)
		return;
	if (errno_only && ret != -errno_only)
		return;
	if (per_process) {
		p = bpf_map_lookup_elem(&by_pid, &tgid);
		if (!p) {
			bpf_map_update_elem(&by_pid, &tgid, &fresh, BPF_NOEXIST);
			p = bpf_map_lookup_elem(&by_pid, &tgid);
			if (!p)
				return;
		}
		/* The name it has now: a fork that executed a command is
		 * listed under the command's. */
		bpf_get_current_comm(p->comm, sizeof(p->comm));
		p->count++;
		p->ns += ns;
		return;
	}
	if (k >= NR_SYSCALLS)
		return;
	s = bpf_map_lookup_elem(&stats, &k);
	if (!s)
		return;
	s->count++;
	s->ns += ns;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sc_btf_enter, struct pt_regs *regs, long nr)
{
	__u64 *slot;

	if (!wanted(bpf_get_current_pid_tgid()))
		return 0;
	slot = bpf_task_storage_get(&start_storage, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (slot)
		*slot = bpf_ktime_get_ns();
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sc_btf_exit, struct pt_regs *regs, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 *slot, ns = 0;

	if (!wanted(id) || compat_syscall())
		return 0;
	if (latency) {
		slot = bpf_task_storage_get(&start_storage, bpf_get_current_task_btf(), 0, 0);
		if (!slot || !*slot)
			return 0;
		ns = bpf_ktime_get_ns() - *slot;
		*slot = 0;
	}
	account(SYSCALL_NR(regs), ret, ns, id >> 32);
	return 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(sc_raw_enter, struct pt_regs *regs, long nr)
{
	__u64 id = bpf_get_current_pid_tgid(), now;
	__u32 tid = (__u32)id;

	if (!wanted(id))
		return 0;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &tid, &now, BPF_ANY);
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(sc_raw_exit, struct pt_regs *regs, long ret)
{
	__u64 id = bpf_get_current_pid_tgid(), *t, ns = 0;
	__u32 tid = (__u32)id;

	if (!wanted(id) || compat_syscall())
		return 0;
	if (latency) {
		t = bpf_map_lookup_elem(&start, &tid);
		if (!t)
			return 0;
		ns = bpf_ktime_get_ns() - *t;
		bpf_map_delete_elem(&start, &tid);
	}
	/* raw_tp: the registers by probe reads (an untrusted pointer). */
	account(SYSCALL_NR_READ(regs), ret, ns, id >> 32);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
