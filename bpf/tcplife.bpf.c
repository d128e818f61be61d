// SPDX-License-Identifier: GPL-2.0
/* tcplife: one record per closed TCP session, from the state changes
 * alone: its span, its bytes (read from the socket at CLOSE), its owner. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tcplife.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "tcpsock.bpf.h"

/* What is known of a session before its end: one map entry, so that a
 * state change costs one lookup, and most changes no update. */
struct session {
	/* The span's start: the last opening state. */
	__u64 ts_ns;
	/* Valid when owner_known. */
	struct task_header owner;
	bool active;
	bool owner_known;
};

/* LRU: sessions open when tracing began may close unseen, or never. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct session);
} sessions SEC(".maps");

struct event event_layout = {};

/* The changes a process makes itself, in its own context: connect()
 * (SYN_SENT), close() or shutdown() first (FIN_WAIT1) or after the peer's
 * FIN (LAST_ACK). The first seen names the owner. */
static __always_inline void note_owner(struct session *s)
{
	task_header_now(&s->owner);
	s->owner_known = true;
}

static __always_inline bool by_owner(int newstate)
{
	return newstate == TCP_SYN_SENT || newstate == TCP_FIN_WAIT1 || newstate == TCP_LAST_ACK;
}

static __always_inline int on_state(const struct sock *sk, int oldstate, int newstate)
{
	__u64 key = (__u64)sk;
	struct session *s;
	struct event e;

	if (!sock_is_tcp(sk))
		return 0;
	s = bpf_map_lookup_elem(&sessions, &key);
	if (newstate < TCP_FIN_WAIT1) {
		if (!s) {
			struct session ns = {};

			ns.ts_ns = bpf_ktime_get_ns();
			ns.active = newstate == TCP_SYN_SENT;
			if (by_owner(newstate))
				note_owner(&ns);
			bpf_map_update_elem(&sessions, &key, &ns, BPF_ANY);
			return 0;
		}
		/* BCC's span: from the last opening state. */
		s->ts_ns = bpf_ktime_get_ns();
	}
	/* A session must have been seen opening: its span is unknown else. */
	if (!s)
		return 0;
	if (by_owner(newstate) && !s->owner_known)
		note_owner(s);
	if (newstate != TCP_CLOSE)
		return 0;

	__builtin_memset(&e, 0, sizeof(e));
	if (!read_flow(sk, &e.flow))
		goto done;
	if (!lport_allowed(e.flow.lport) || !dport_allowed(e.flow.dport) ||
	    !sock_cgroup_allowed(sk))
		goto done;
	if (s->owner_known) {
		__builtin_memcpy(&e.task, &s->owner, sizeof(e.task));
		e.owner_known = 1;
	} else {
		task_header_now(&e.task);
	}
	/* Only a known owner can be the tool itself: else current is whoever
	 * the CPU ran when the session closed (a softirq). */
	if ((e.owner_known && !not_self(e.task.pid)) ||
	    (filter_pids && !bpf_map_lookup_elem(&pid_filter, &e.task.pid)))
		goto done;
	e.task.ts_ns = bpf_ktime_get_ns();
	e.span_ns = e.task.ts_ns - s->ts_ns;
	e.active = s->active;
	/* As tcp_get_info()'s tcpi_bytes_received and tcpi_bytes_acked. */
	e.rx_bytes = BPF_CORE_READ((const struct tcp_sock *)sk, bytes_received);
	e.tx_bytes = BPF_CORE_READ((const struct tcp_sock *)sk, bytes_acked);
	emit(&e, sizeof(e));
done:
	bpf_map_delete_elem(&sessions, &key);
	return 0;
}

STATE_CHANGE_PROGRAMS(on_state)

char LICENSE[] SEC("license") = "GPL";
