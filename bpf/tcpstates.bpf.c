// SPDX-License-Identifier: GPL-2.0
/* tcpstates: every TCP state change, from sock:inet_sock_set_state, with
 * the time the socket spent in the state it leaves. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tcpstates.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "tcpsock.bpf.h"

/* When each socket entered its current state. LRU: sockets that were
 * already open when tracing began may never be seen closing. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} entered SEC(".maps");

struct event event_layout = {};

static __always_inline int on_state(const struct sock *sk, int oldstate, int newstate)
{
	__u64 key = (__u64)sk, now, *since;
	struct event e;

	if (!sock_is_tcp(sk))
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	if (!read_flow(sk, &e.flow))
		return 0;
	if (!lport_allowed(e.flow.lport) || !dport_allowed(e.flow.dport) ||
	    !sock_cgroup_allowed(sk))
		return 0;
	now = bpf_ktime_get_ns();
	since = bpf_map_lookup_elem(&entered, &key);
	e.delta_ns = since ? now - *since : 0;
	if (newstate == TCP_CLOSE)
		bpf_map_delete_elem(&entered, &key);
	else
		bpf_map_update_elem(&entered, &key, &now, BPF_ANY);
	task_header_now(&e.task);
	/* The change: the time delta_ns ends at, and the next one's start. */
	e.task.ts_ns = now;
	e.skaddr = key;
	e.oldstate = oldstate;
	e.newstate = newstate;
	emit(&e, sizeof(e));
	return 0;
}

STATE_CHANGE_PROGRAMS(on_state)

char LICENSE[] SEC("license") = "GPL";
