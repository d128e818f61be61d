// SPDX-License-Identifier: GPL-2.0
/* tcpdrop: TCP segments the kernel drops, from skb:kfree_skb, with the
 * drop reason (5.17+) and the kernel stack. The segment's addresses, ports
 * and flags are read from its own headers, so drops before any socket is
 * found (no socket, netfilter, checksum) are seen too; its socket (where
 * known) gives the TCP state. Variants by the tracepoint's arguments: (skb,
 * location) before 5.17, + reason, + the receiving socket (6.11+?). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tcpdrop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "tcpsock.bpf.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD

/* Drops with reason NOT_SPECIFIED too (many are not losses). */
const volatile bool all_reasons = false;
/* The kernel stack of each drop (not with --no-stack). */
const volatile bool want_stack = true;

/* Too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct event);
} scratch SEC(".maps");

/* Fills the flow and flags from the segment's IP and TCP headers; false
 * for anything but TCP. */
static __always_inline bool read_headers(const struct sk_buff *skb, struct event *e)
{
	unsigned char *head = BPF_CORE_READ(skb, head);
	__u16 nh = BPF_CORE_READ(skb, network_header);
	__u16 th = BPF_CORE_READ(skb, transport_header);
	__u16 proto = bpf_ntohs(BPF_CORE_READ(skb, protocol));
	struct tcphdr tcp;
	__u8 version = 0;

	/* Unset header offsets are ~0. */
	if (nh == (__u16)~0U || th == (__u16)~0U || !head)
		return false;
	bpf_probe_read_kernel(&version, 1, head + nh);
	version >>= 4;
	if (version == 4 && (!proto || proto == ETH_P_IP)) {
		struct iphdr ip;

		if (bpf_probe_read_kernel(&ip, sizeof(ip), head + nh) || ip.protocol != IPPROTO_TCP)
			return false;
		e->flow.family = AF_INET;
		__builtin_memcpy(e->flow.saddr, &ip.saddr, 4);
		__builtin_memcpy(e->flow.daddr, &ip.daddr, 4);
	} else if (version == 6 && (!proto || proto == ETH_P_IPV6)) {
		struct ipv6hdr ip6;

		if (bpf_probe_read_kernel(&ip6, sizeof(ip6), head + nh) || ip6.nexthdr != IPPROTO_TCP)
			return false;
		e->flow.family = AF_INET6;
		__builtin_memcpy(e->flow.saddr, &ip6.saddr, 16);
		__builtin_memcpy(e->flow.daddr, &ip6.daddr, 16);
	} else {
		return false;
	}
	if (target_family && e->flow.family != target_family)
		return false;
	if (bpf_probe_read_kernel(&tcp, sizeof(tcp), head + th))
		return false;
	e->flow.lport = bpf_ntohs(tcp.source);
	e->flow.dport = bpf_ntohs(tcp.dest);
	/* The flags byte: after the 12 bytes of ports, sequence, ack and the
	 * data offset. */
	bpf_probe_read_kernel(&e->tcp_flags, 1, head + th + 13);
	return true;
}

static __always_inline int on_drop(void *ctx, const struct sk_buff *skb, void *location,
				   bool has_reason, __u32 reason, const struct sock *sk)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0;
	struct event *e;
	long n;

	if (has_reason && !all_reasons &&
	    reason <= bpf_core_enum_value(enum skb_drop_reason, SKB_DROP_REASON_NOT_SPECIFIED))
		return 0;
	/* Drops happen in softirq: whoever was interrupted is current. */
	if (!ids_allowed(id))
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	__builtin_memset(&e->flow, 0, sizeof(e->flow));
	if (!read_headers(skb, e))
		return 0;
	if (!lport_allowed(e->flow.lport) && !lport_allowed(e->flow.dport))
		return 0;
	if (!sk)
		sk = BPF_CORE_READ(skb, sk);
	e->state = sk ? BPF_CORE_READ(sk, __sk_common.skc_state) : 0;
	/* A drop with no full socket (none, a request's, a time-wait one)
	 * belongs to no cgroup. */
	if (sock_cgroup_target && (!sk || e->state == TCP_NEW_SYN_RECV ||
				   e->state == TCP_TIME_WAIT || !sock_cgroup_allowed(sk)))
		return 0;
	task_header_now(&e->task);
	e->location = (__u64)location;
	e->has_reason = has_reason;
	e->reason = reason;
	n = want_stack ? bpf_get_stack(ctx, e->stack, sizeof(e->stack), 0) : 0;
	e->stack_frames = n > 0 ? n / sizeof(__u64) : 0;
	emit(e, sizeof(*e));
	return 0;
}

/* 6.11+: (skb, location, reason, rx_sk). Reason and socket come from fixed
 * context slots: each variant's program names them. */
SEC("tp_btf/kfree_skb")
int BPF_PROG(td_btf4, struct sk_buff *skb, void *location, int reason, struct sock *rx_sk)
{
	return on_drop(ctx, skb, location, true, reason, rx_sk);
}

/* 5.17+: (skb, location, reason). */
SEC("tp_btf/kfree_skb")
int BPF_PROG(td_btf3, struct sk_buff *skb, void *location, int reason)
{
	return on_drop(ctx, skb, location, true, reason, 0);
}

/* Before: (skb, location). */
SEC("tp_btf/kfree_skb")
int BPF_PROG(td_btf2, struct sk_buff *skb, void *location)
{
	return on_drop(ctx, skb, location, false, 0, 0);
}

char LICENSE[] SEC("license") = "GPL";
