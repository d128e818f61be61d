/* Shared by the TCP tools: a socket's flow, the family and port filters,
 * and the variants of the state-change hook (sock:inet_sock_set_state),
 * which the front end chooses between (common::kernel::tcp). */
#ifndef __TCPSOCK_BPF_H
#define __TCPSOCK_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "tcpsock.h"

#define AF_INET 2
#define AF_INET6 10
#define MAX_PORTS 1024

/* 0: both families; else AF_INET or AF_INET6. */
const volatile __u16 target_family = 0;
/* -L / -P style port lists, filled by common::kernel::tcp. */
const volatile bool filter_lports = false;
const volatile bool filter_dports = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u16);
	__type(value, __u8);
} lport_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u16);
	__type(value, __u8);
} dport_filter SEC(".maps");

/* sk_protocol was a bitfield before 5.6; the probed bitfield read takes
 * either layout. */
static __always_inline bool sock_is_tcp(const struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol) == IPPROTO_TCP;
}

/* Before 5.15 (and its stable backports) the socket's cgroup was a tagged
 * word: the cgroup's pointer when the low bit is clear. */
struct sock_cgroup_data___word {
	__u64 val;
} __attribute__((preserve_access_index));

/* The socket's cgroup: that of the task that made the socket (a
 * listener's, for a connection it accepted), which the context of a packet
 * (softirq) cannot give as the current task's. NULL if unknown. */
static __always_inline struct cgroup *sock_cgroup(const struct sock *sk)
{
	if (bpf_core_field_exists(sk->sk_cgrp_data.cgroup))
		return BPF_CORE_READ(sk, sk_cgrp_data.cgroup);

	struct sock_cgroup_data___word *d = (void *)&sk->sk_cgrp_data;
	__u64 v = BPF_CORE_READ(d, val);

	return v & 1 ? 0 : (void *)v;
}

/* The socket's cgroup v2 id; 0 if unknown. */
static __always_inline __u64 sock_cgroup_id(const struct sock *sk)
{
	struct cgroup *cg = sock_cgroup(sk);

	return cg ? BPF_CORE_READ(cg, kn, id) : 0;
}

/* Before 6.0 a cgroup kept its ancestors' ids, not the ancestors. */
struct cgroup___ids {
	int level;
	__u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/* -c/--container/--unit for sockets: the cgroup's id and depth, set by the
 * front end (common::kernel::filters); 0: no filter. */
const volatile __u64 sock_cgroup_target = 0;
const volatile __u32 sock_cgroup_level = 0;

/* The socket's cgroup is the target or below it: its ancestor at the
 * target's depth is the target (as the kernel's cgroup_is_descendant). */
static __always_inline bool sock_cgroup_allowed(const struct sock *sk)
{
	struct cgroup *cg, *at;
	__u32 lvl = sock_cgroup_level & 255;
	__u64 id = 0;

	if (!sock_cgroup_target)
		return true;
	cg = sock_cgroup(sk);
	if (!cg || BPF_CORE_READ(cg, level) < (int)lvl)
		return false;
	if (bpf_core_field_exists(cg->ancestors)) {
		bpf_core_read(&at, sizeof(at), &cg->ancestors[lvl]);
		id = at ? BPF_CORE_READ(at, kn, id) : 0;
	} else {
		struct cgroup___ids *old = (void *)cg;

		bpf_core_read(&id, sizeof(id), &old->ancestor_ids[lvl]);
	}
	return id == sock_cgroup_target;
}

/* Fills the flow from a sock_common (a full socket's, or a request
 * socket's __req_common); false if its family is not traced. */
static __always_inline bool read_flow_common(const struct sock_common *skc, struct flow *f)
{
	f->family = BPF_CORE_READ(skc, skc_family);
	if (target_family && f->family != target_family)
		return false;
	f->lport = BPF_CORE_READ(skc, skc_num);
	f->dport = bpf_ntohs(BPF_CORE_READ(skc, skc_dport));
	/* Explicit sizes: BPF_CORE_READ_INTO would copy sizeof(*dst), a byte. */
	if (f->family == AF_INET) {
		bpf_core_read(f->saddr, 4, &skc->skc_rcv_saddr);
		bpf_core_read(f->daddr, 4, &skc->skc_daddr);
	} else if (f->family == AF_INET6) {
		bpf_core_read(f->saddr, 16, &skc->skc_v6_rcv_saddr);
		bpf_core_read(f->daddr, 16, &skc->skc_v6_daddr);
	} else {
		return false;
	}
	return true;
}

/* Fills the flow from a full socket; false if its family is not traced.
 * The local port is the bound one (skc_num), else the one the socket
 * sends from (inet_sport): the kernel clears the first as a closing
 * socket leaves the hash, before its last state change. */
static __always_inline bool read_flow(const struct sock *sk, struct flow *f)
{
	if (!read_flow_common(&sk->__sk_common, f))
		return false;
	if (!f->lport)
		f->lport = bpf_ntohs(BPF_CORE_READ((const struct inet_sock *)sk, inet_sport));
	return true;
}

static __always_inline bool lport_allowed(__u16 port)
{
	return !filter_lports || bpf_map_lookup_elem(&lport_filter, &port);
}

static __always_inline bool dport_allowed(__u16 port)
{
	return !filter_dports || bpf_map_lookup_elem(&dport_filter, &port);
}

/* The classic tracepoint's record: its layout up to the states has not
 * changed since the tracepoint was added (4.16). */
struct tp_inet_sock_set_state {
	__u64 common;
	const struct sock *skaddr;
	int oldstate;
	int newstate;
};

/* The three variants of the state-change hook, each calling `handler(sk,
 * oldstate, newstate)`: tp_btf (5.5+), raw_tp, the classic tracepoint. */
#define STATE_CHANGE_PROGRAMS(handler)                                          \
	SEC("tp_btf/inet_sock_set_state")                                       \
	int BPF_PROG(state_btf, const struct sock *sk, int oldstate, int newstate) \
	{                                                                       \
		return handler(sk, oldstate, newstate);                         \
	}                                                                       \
	SEC("raw_tp/inet_sock_set_state")                                       \
	int BPF_PROG(state_raw, const struct sock *sk, int oldstate, int newstate) \
	{                                                                       \
		return handler(sk, oldstate, newstate);                         \
	}                                                                       \
	SEC("tracepoint/sock/inet_sock_set_state")                              \
	int state_tp(struct tp_inet_sock_set_state *ctx)                        \
	{                                                                       \
		return handler(ctx->skaddr, ctx->oldstate, ctx->newstate);      \
	}

#endif
