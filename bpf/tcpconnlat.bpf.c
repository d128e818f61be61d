// SPDX-License-Identifier: GPL-2.0
/* tcpconnlat: TCP connect latency from the state changes alone: CLOSE ->
 * SYN_SENT runs in connect(), in the caller; SYN_SENT -> ESTABLISHED when
 * the SYN-ACK is processed; SYN_SENT -> CLOSE forgets a failed connect. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tcpconnlat.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "tcpsock.bpf.h"

/* -m: only connects slower than this. */
const volatile __u64 min_latency_ns = 0;

/* The connecting task at CLOSE -> SYN_SENT; owner.ts_ns: the SYN sent. */
struct start {
	struct task_header owner;
};

/* LRU: a connect still pending when the tool stops is never completed. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct start);
} starts SEC(".maps");

struct event event_layout = {};

static __always_inline int on_state(const struct sock *sk, int oldstate, int newstate)
{
	__u64 key = (__u64)sk, id, now;
	struct start *s, ns = {};
	struct event e;

	if (newstate == TCP_SYN_SENT) {
		if (!sock_is_tcp(sk))
			return 0;
		id = bpf_get_current_pid_tgid();
		if (!task_allowed(id) || !cgroup_allowed())
			return 0;
		task_header_now(&ns.owner);
		bpf_map_update_elem(&starts, &key, &ns, BPF_ANY);
		return 0;
	}
	if (oldstate != TCP_SYN_SENT)
		return 0;
	s = bpf_map_lookup_elem(&starts, &key);
	if (!s)
		return 0;
	now = bpf_ktime_get_ns();
	if (newstate == TCP_ESTABLISHED && now - s->owner.ts_ns >= min_latency_ns) {
		__builtin_memset(&e, 0, sizeof(e));
		if (read_flow(sk, &e.flow)) {
			__builtin_memcpy(&e.task, &s->owner, sizeof(e.task));
			e.task.ts_ns = now;
			e.latency_ns = now - s->owner.ts_ns;
			emit(&e, sizeof(e));
		}
	}
	bpf_map_delete_elem(&starts, &key);
	return 0;
}

STATE_CHANGE_PROGRAMS(on_state)

char LICENSE[] SEC("license") = "GPL";
