// SPDX-License-Identifier: GPL-2.0
/* klockstat: kernel lock waits and holds, by the kernel stack that asked
 * for the lock (or by thread).
 *
 * Waits come from the lock:contention_begin/end tracepoints (5.19+),
 * which every sleeping and spinning lock fires when it is contended and
 * which need no kprobes. Holds need the lock calls themselves: kprobes on
 * mutex_lock, down_read, down_write and their kin, and on the unlocks.
 * Where the tracepoints are missing (before 5.19), the lock calls' own
 * time is the wait (what libbpf-tools' klockstat measures). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "klockstat.h"
#include "errors.bpf.h"
#include "stacks.bpf.h"
#include "maps.bpf.h"
#include "filters.bpf.h"

/* -L: this lock only (0: every lock). */
const volatile __u64 targ_lock = 0;
/* -P: by thread, no stacks. */
const volatile bool per_thread = false;
/* No contention tracepoints: the lock calls' time is the wait. */
const volatile bool waits_from_calls = false;
/* --containers: keyed by the task's cgroup too. */
const volatile bool by_cgroup = false;

struct lock_key key_layout = {};
struct lock_stat stat_layout = {};
enum klockstat_error error_layout;

STACK_MAP(stacks);

#define STATS_MAP(name)							\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__uint(max_entries, 16384);				\
		__type(key, struct lock_key);				\
		__type(value, struct lock_stat);			\
	} name SEC(".maps")

STATS_MAP(waits);
STATS_MAP(holds);

struct task_lock {
	__u32 tid;
	__u32 pad;
	__u64 lock;
};

/* Since when, from which stack, for which kind of lock. */
struct since {
	__u64 ts;
	__s32 stack_id;
	__u32 flags;
};

/* Contentions under way, by thread and lock: a spinlock contended in an
 * interrupt nests inside the interrupted task's wait for another lock.
 * LRU: an end never seen (the tool attached in between) leaves room. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct task_lock);
	__type(value, struct since);
} contending SEC(".maps");

/* Lock calls under way (kprobes), by thread: a lock call never nests in
 * another of the same thread. */
struct calling {
	struct since since;
	__u64 lock;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct calling);
} calling SEC(".maps");

/* Locks held, by thread and lock. LRU: a read lock may be released by
 * another thread than took it, and its entry would stay. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct task_lock);
	__type(value, struct since);
} held SEC(".maps");

static __always_inline bool wanted(__u64 lock, __u64 id)
{
	return (!targ_lock || lock == targ_lock) && task_allowed(id) && cgroup_allowed();
}

/* The stack that asked for the lock; `skip` frames left out (a kprobe's
 * first frame is the probed function itself). */
static __always_inline __s32 asked_from(void *ctx, __u64 skip)
{
	return per_thread ? -1 : stack_id(ctx, &stacks, skip & BPF_F_SKIP_FIELD_MASK);
}

static __always_inline void add(void *map, const struct since *s, __u64 lock, __u64 delta,
				__u64 id)
{
	struct lock_key key = {
		.stack_id = s->stack_id,
		.tid = per_thread ? (__u32)id : 0,
		.flags = s->flags,
		.cgroup_id = by_cgroup ? bpf_get_current_cgroup_id() : 0,
	};
	struct lock_stat zero = {}, *st;

	st = lookup_or_try_init(map, &key, &zero);
	if (!st) {
		count_error(ERR_STATS_FULL);
		return;
	}
	__sync_fetch_and_add(&st->count, 1);
	__sync_fetch_and_add(&st->total_ns, delta);
	/* Two CPUs may race here: the longest is then one of theirs. */
	if (delta > st->max_ns) {
		st->max_ns = delta;
		st->max_lock = lock;
		st->max_pid = id >> 32;
		st->max_tid = (__u32)id;
		bpf_get_current_comm(st->max_comm, sizeof(st->max_comm));
	}
}

/* The contention tracepoints. */

static __always_inline void contention_begin(void *ctx, __u64 lock, __u32 flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct task_lock k = { .tid = (__u32)id, .lock = lock };
	struct since s = { .flags = flags };

	if (!wanted(lock, id))
		return;
	s.stack_id = asked_from(ctx, 0);
	s.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&contending, &k, &s, BPF_ANY))
		count_error(ERR_TRACKING_FULL);
}

static __always_inline void contention_end(__u64 lock)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	struct task_lock k = { .tid = (__u32)id, .lock = lock };
	struct since *found, s;

	found = bpf_map_lookup_elem(&contending, &k);
	if (!found)
		return;
	s = *found;
	bpf_map_delete_elem(&contending, &k);
	add(&waits, &s, lock, now - s.ts, id);
}

SEC("tp_btf/contention_begin")
int BPF_PROG(begin_btf, void *lock, unsigned int flags)
{
	contention_begin(ctx, (__u64)lock, flags);
	return 0;
}

SEC("raw_tp/contention_begin")
int BPF_PROG(begin_raw, void *lock, unsigned int flags)
{
	contention_begin(ctx, (__u64)lock, flags);
	return 0;
}

SEC("tracepoint/lock/contention_begin")
int begin_tp(struct trace_event_raw_contention_begin *ctx)
{
	contention_begin(ctx, (__u64)ctx->lock_addr, ctx->flags);
	return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(end_btf, void *lock, int ret)
{
	contention_end((__u64)lock);
	return 0;
}

SEC("raw_tp/contention_end")
int BPF_PROG(end_raw, void *lock, int ret)
{
	contention_end((__u64)lock);
	return 0;
}

SEC("tracepoint/lock/contention_end")
int end_tp(struct trace_event_raw_contention_end *ctx)
{
	contention_end((__u64)ctx->lock_addr);
	return 0;
}

/* The lock calls (kprobes, attached by the front end to each function the
 * kernel has: mutex_lock or mutex_lock_nested, ...). */

static __always_inline int lock_called(struct pt_regs *ctx, __u32 flags)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 lock = PT_REGS_PARM1(ctx);
	__u32 tid = (__u32)id;
	struct calling c = { .since = { .flags = flags }, .lock = lock };

	if (!wanted(lock, id))
		return 0;
	c.since.stack_id = asked_from(ctx, 1);
	c.since.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&calling, &tid, &c, BPF_ANY))
		count_error(ERR_TRACKING_FULL);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(mutex_enter)
{
	return lock_called(ctx, LOCK_MUTEX);
}

SEC("kprobe")
int BPF_KPROBE(read_enter)
{
	return lock_called(ctx, LOCK_READ);
}

SEC("kprobe")
int BPF_KPROBE(write_enter)
{
	return lock_called(ctx, LOCK_WRITE);
}

static __always_inline int lock_returned(bool acquired)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct calling *found, c;
	struct task_lock k = { .tid = tid };
	struct since h;

	found = bpf_map_lookup_elem(&calling, &tid);
	if (!found)
		return 0;
	c = *found;
	bpf_map_delete_elem(&calling, &tid);
	if (!acquired)
		return 0;
	if (waits_from_calls)
		add(&waits, &c.since, c.lock, now - c.since.ts, id);
	k.lock = c.lock;
	h = c.since;
	h.ts = now;
	if (bpf_map_update_elem(&held, &k, &h, BPF_ANY))
		count_error(ERR_TRACKING_FULL);
	return 0;
}

/* mutex_lock, down_read, down_write: void, always acquired. */
SEC("kretprobe")
int BPF_KRETPROBE(void_exit)
{
	return lock_returned(true);
}

/* The interruptible and killable calls: 0 when acquired. */
SEC("kretprobe")
int BPF_KRETPROBE(zero_exit, long ret)
{
	return lock_returned(ret == 0);
}

/* The trylocks: 1 when acquired. */
SEC("kretprobe")
int BPF_KRETPROBE(try_exit, long ret)
{
	return lock_returned(ret == 1);
}

SEC("kprobe")
int BPF_KPROBE(unlock, void *lock)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	struct task_lock k = { .tid = (__u32)id, .lock = (__u64)lock };
	struct since *found, h;

	found = bpf_map_lookup_elem(&held, &k);
	if (!found) {
		if (wanted((__u64)lock, id))
			count_error(ERR_UNMATCHED_UNLOCK);
		return 0;
	}
	h = *found;
	bpf_map_delete_elem(&held, &k);
	add(&holds, &h, (__u64)lock, now - h.ts, id);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
