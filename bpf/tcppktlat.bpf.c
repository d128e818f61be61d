// SPDX-License-Identifier: GPL-2.0
/* tcppktlat: how long received TCP data waits for its reader. A segment
 * with data arrives (tcp:tcp_probe, in softirq): its time is kept for the
 * socket unless older unread data's is; the reader reads
 * (tcp:tcp_rcv_space_adjust, in recvmsg, in the reader): the wait is the
 * time since. The socket's end (tcp:tcp_destroy_sock) drops what is kept.
 * tp_btf where the kernel has it, else raw_tp; the same handlers, with
 * probe reads. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "tcppktlat.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "tcpsock.bpf.h"

/* Waits at least this long are shown. */
const volatile __u64 min_wait_ns = 0;

struct event event_layout = {};

/* By socket: when its oldest unread data arrived. LRU: sockets that end
 * unseen (their destroy missed) leave theirs. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u64);
	__type(value, __u64);
} arrived SEC(".maps");

/* Its ports against -l and -r, where the socket is TCP. */
static __always_inline bool ports_allowed(const struct sock *sk)
{
	/* At every segment: no read where no port filter asks for one. */
	if (filter_lports && !lport_allowed(BPF_CORE_READ(sk, __sk_common.skc_num)))
		return false;
	return !filter_dports || dport_allowed(bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport)));
}

static __always_inline int on_segment(const struct sock *sk, const struct sk_buff *skb)
{
	const struct tcphdr *th;
	__u64 key = (__u64)sk, now;
	__u32 len, doff;

	if (!ports_allowed(sk))
		return 0;
	/* A segment without data (an ACK) gives the reader nothing. */
	th = (const struct tcphdr *)BPF_CORE_READ(skb, data);
	doff = BPF_CORE_READ_BITFIELD_PROBED(th, doff);
	len = BPF_CORE_READ(skb, len);
	if (len <= doff * 4)
		return 0;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&arrived, &key, &now, BPF_NOEXIST);
	return 0;
}

static __always_inline int on_read(const struct sock *sk)
{
	__u64 key = (__u64)sk, now = bpf_ktime_get_ns();
	__u64 *at = bpf_map_lookup_elem(&arrived, &key);
	struct event e;

	if (!at)
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	e.wait_ns = now > *at ? now - *at : 0;
	bpf_map_delete_elem(&arrived, &key);
	if (e.wait_ns < min_wait_ns || !task_allowed(bpf_get_current_pid_tgid()))
		return 0;
	if (!read_flow(sk, &e.flow) || !sock_cgroup_allowed(sk))
		return 0;
	task_header_now(&e.task);
	e.task.ts_ns = now;
	emit(&e, sizeof(e));
	return 0;
}

static __always_inline int on_destroy(const struct sock *sk)
{
	__u64 key = (__u64)sk;

	bpf_map_delete_elem(&arrived, &key);
	return 0;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(segment_btf, struct sock *sk, struct sk_buff *skb)
{
	return on_segment(sk, skb);
}

SEC("tp_btf/tcp_rcv_space_adjust")
int BPF_PROG(read_btf, struct sock *sk)
{
	return on_read(sk);
}

SEC("tp_btf/tcp_destroy_sock")
int BPF_PROG(destroy_btf, struct sock *sk)
{
	return on_destroy(sk);
}

SEC("raw_tp/tcp_probe")
int BPF_PROG(segment_raw, struct sock *sk, struct sk_buff *skb)
{
	return on_segment(sk, skb);
}

SEC("raw_tp/tcp_rcv_space_adjust")
int BPF_PROG(read_raw, struct sock *sk)
{
	return on_read(sk);
}

SEC("raw_tp/tcp_destroy_sock")
int BPF_PROG(destroy_raw, struct sock *sk)
{
	return on_destroy(sk);
}

char LICENSE[] SEC("license") = "GPL";
