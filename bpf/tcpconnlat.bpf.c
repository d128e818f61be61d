// SPDX-License-Identifier: GPL-2.0
/* tcpconnlat: TCP connect latency from the state changes alone: CLOSE ->
 * SYN_SENT runs in connect(), in the caller; SYN_SENT -> ESTABLISHED when
 * the SYN-ACK is processed; SYN_SENT -> CLOSE forgets a failed connect. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tcpconnlat.h"
#include "events.bpf.h"
#include "filters.bpf.h"
#include "tcpsock.bpf.h"

/* -m: only connects slower than this. */
const volatile __u64 min_latency_ns = 0;

struct start {
	__u64 ts_ns;
	__u32 tgid;
	char comm[TASK_COMM_LEN];
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
		ns.ts_ns = bpf_ktime_get_ns();
		ns.tgid = id >> 32;
		bpf_get_current_comm(&ns.comm, sizeof(ns.comm));
		bpf_map_update_elem(&starts, &key, &ns, BPF_ANY);
		return 0;
	}
	if (oldstate != TCP_SYN_SENT)
		return 0;
	s = bpf_map_lookup_elem(&starts, &key);
	if (!s)
		return 0;
	now = bpf_ktime_get_ns();
	if (newstate == TCP_ESTABLISHED && now - s->ts_ns >= min_latency_ns) {
		__builtin_memset(&e, 0, sizeof(e));
		if (read_flow(sk, &e.flow)) {
			e.ts_ns = now;
			e.latency_ns = now - s->ts_ns;
			e.pid = s->tgid;
			__builtin_memcpy(e.comm, s->comm, sizeof(e.comm));
			emit(&e, sizeof(e));
		}
	}
	bpf_map_delete_elem(&starts, &key);
	return 0;
}

STATE_CHANGE_PROGRAMS(on_state)

char LICENSE[] SEC("license") = "GPL";
