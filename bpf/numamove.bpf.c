// SPDX-License-Identifier: GPL-2.0
/* numamove: page migrations and their latency, from the kernel's
 * migrate_pages(): its start (migrate:mm_migrate_pages_start, 5.13+; a
 * kprobe on migrate_pages before) and its end (migrate:mm_migrate_pages,
 * with the pages moved and failed), both naming the reason. NUMA balancing
 * moves each misplaced page (folio) through one such call, with reason
 * MR_NUMA_MISPLACED: what BCC's numamove counts at
 * migrate_misplaced_page(), by kprobe. Running totals in a per-CPU array;
 * the front end prints their growth. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "numamove.h"
#include "filters.bpf.h"

/* The reasons counted: bit N for the kernel's enum migrate_reason N. */
const volatile __u64 reasons = 0;

enum numamove_stat stat_layout = NM_MAX;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NM_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* A migration under way, by thread: its start. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} started SEC(".maps");

static __always_inline bool wanted(long reason)
{
	return reason >= 0 && reason < 64 && ((reasons >> reason) & 1);
}

static __always_inline int on_start(long reason)
{
	__u64 id = bpf_get_current_pid_tgid(), ts;
	__u32 tid = id;

	if (!wanted(reason) || !task_allowed(id) || !cgroup_allowed())
		return 0;
	ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&started, &tid, &ts, BPF_ANY);
	return 0;
}

static __always_inline void add(__u32 slot, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&stats, &slot);

	if (c)
		*c += n;
}

static __always_inline int on_end(__u64 succeeded, __u64 failed, long reason)
{
	__u32 tid = bpf_get_current_pid_tgid();
	__u64 *ts, delta;

	ts = bpf_map_lookup_elem(&started, &tid);
	if (!ts)
		return 0;
	delta = bpf_ktime_get_ns() - *ts;
	bpf_map_delete_elem(&started, &tid);
	if (!wanted(reason))
		return 0;
	add(NM_MIGRATIONS, 1);
	add(NM_NS, delta);
	add(NM_PAGES, succeeded);
	add(NM_FAILED, failed);
	return 0;
}

SEC("tp_btf/mm_migrate_pages_start")
int BPF_PROG(start_btf, enum migrate_mode mode, int reason)
{
	return on_start(reason);
}

SEC("raw_tp/mm_migrate_pages_start")
int BPF_PROG(start_raw, enum migrate_mode mode, int reason)
{
	return on_start(reason);
}

/* Before 5.13: migrate_pages(from, get_new, put_new, private, mode,
 * reason); the front end checks that it has those six arguments. */
SEC("kprobe/migrate_pages")
int BPF_KPROBE(start_kprobe)
{
	return on_start((int)PT_REGS_PARM6(ctx));
}

/* The end's arguments: succeeded, failed, (5.9+) thp_succeeded,
 * thp_failed, thp_split, (6.6+) large_folio_split, then mode and reason.
 * One program per form: a tracepoint's context is read at fixed offsets. */
SEC("tp_btf/mm_migrate_pages")
int BPF_PROG(end_btf4, unsigned long succeeded, unsigned long failed, enum migrate_mode mode,
	     int reason)
{
	return on_end(succeeded, failed, reason);
}

SEC("raw_tp/mm_migrate_pages")
int BPF_PROG(end_raw4, unsigned long succeeded, unsigned long failed, enum migrate_mode mode,
	     int reason)
{
	return on_end(succeeded, failed, reason);
}

SEC("tp_btf/mm_migrate_pages")
int BPF_PROG(end_btf7, unsigned long succeeded, unsigned long failed, unsigned long thp_ok,
	     unsigned long thp_failed, unsigned long thp_split, enum migrate_mode mode, int reason)
{
	return on_end(succeeded, failed, reason);
}

SEC("tp_btf/mm_migrate_pages")
int BPF_PROG(end_btf8, unsigned long succeeded, unsigned long failed, unsigned long thp_ok,
	     unsigned long thp_failed, unsigned long thp_split, unsigned long split,
	     enum migrate_mode mode, int reason)
{
	return on_end(succeeded, failed, reason);
}

SEC("raw_tp/mm_migrate_pages")
int BPF_PROG(end_raw7, unsigned long succeeded, unsigned long failed, unsigned long thp_ok,
	     unsigned long thp_failed, unsigned long thp_split, enum migrate_mode mode, int reason)
{
	return on_end(succeeded, failed, reason);
}

SEC("raw_tp/mm_migrate_pages")
int BPF_PROG(end_raw8, unsigned long succeeded, unsigned long failed, unsigned long thp_ok,
	     unsigned long thp_failed, unsigned long thp_split, unsigned long split,
	     enum migrate_mode mode, int reason)
{
	return on_end(succeeded, failed, reason);
}

char LICENSE[] SEC("license") = "GPL";
