// SPDX-License-Identifier: GPL-2.0
/* tcpretrans: TCP retransmits (and SYN-ACK retransmits, and tail loss
 * probes where fentry or kprobes exist), read from the socket itself.
 * Variants: tp_btf (preferred), raw_tp, classic tracepoint; the loss
 * probe hook is fentry or kprobe. The front end loads one of each kind. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>
#include "tcpretrans.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "maps.bpf.h"
#include "errors.bpf.h"
#include "tcpsock.bpf.h"

#define TCP_SYN_SENT 2
#define TCP_CLOSE 7

/* -c: count per flow in the kernel instead of sending events. */
const volatile bool count_flows = false;

/* Retransmits run in softirq or timer context, so the current task says
 * nothing about whose socket it is. The owner is noted where the kernel
 * runs in the owner's context: connect() (SYN_SENT) and sendmsg. */
struct owner {
	struct task_header owner;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct owner);
} owners SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct flow);
	__type(value, __u64);
} flows SEC(".maps");

/* Events are built on the stack; this global makes libbpf-cargo generate
 * the Rust type of `struct event` for the front end. */
struct event event_layout = {};

static __always_inline void note_owner(const struct sock *sk)
{
	__u64 key = (__u64)sk;
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct owner *known = bpf_map_lookup_elem(&owners, &key);
	struct owner o = {};

	/* The common case, a socket sending again: one lookup, no update. */
	if (known && known->owner.pid == tgid)
		return;
	task_header_now(&o.owner);
	bpf_map_update_elem(&owners, &key, &o, BPF_ANY);
}

static __always_inline int on_state(const struct sock *sk, int oldstate, int newstate)
{
	__u64 key = (__u64)sk;

	if (newstate == TCP_SYN_SENT)
		note_owner(sk);
	else if (newstate == TCP_CLOSE)
		bpf_map_delete_elem(&owners, &key);
	return 0;
}

STATE_CHANGE_PROGRAMS(on_state)

static __always_inline void count_flow(struct flow *k)
{
	static const __u64 zero;
	__u64 *n = lookup_or_try_init(&flows, k, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
	else
		count_error(ERR_FLOWS_FULL);
}

static __always_inline int report(const struct sock_common *skc, const struct sk_buff *skb,
				  __u8 kind)
{
	struct flow k = {};
	struct owner *o;
	struct event e;
	__u64 key = (__u64)skc;

	if (!read_flow_common(skc, &k))
		return 0;
	/* A request socket (a SYN-ACK's) has no cgroup of its own. */
	if (sock_cgroup_target && (BPF_CORE_READ(skc, skc_state) == TCP_NEW_SYN_RECV ||
				   !sock_cgroup_allowed((const struct sock *)skc)))
		return 0;
	o = bpf_map_lookup_elem(&owners, &key);
	if (o && !not_self(o->owner.pid))
		return 0;
	if (filter_pids && (!o || !bpf_map_lookup_elem(&pid_filter, &o->owner.pid)))
		return 0;
	if (count_flows) {
		count_flow(&k);
		return 0;
	}
	__builtin_memset(&e, 0, sizeof(e));
	if (o) {
		__builtin_memcpy(&e.task, &o->owner, sizeof(e.task));
		e.task.ts_ns = bpf_ktime_get_ns();
		e.owner_known = 1;
	} else {
		task_header_now(&e.task);
	}
	e.kind = kind;
	e.flow = k;
	e.state = BPF_CORE_READ(skc, skc_state);
	/* TCP_SKB_CB(skb)->seq: the control block starts with the sequence. */
	if (skb)
		bpf_probe_read_kernel(&e.seq, sizeof(e.seq),
				      (void *)skb + bpf_core_field_offset(struct sk_buff, cb));
	emit(&e, sizeof(e));
	return 0;
}

static __always_inline int on_retransmit(const struct sock *sk, const struct sk_buff *skb)
{
	return report(&sk->__sk_common, skb, KIND_RETRANS);
}

static __always_inline int on_synack(const struct request_sock *req)
{
	return report(&req->__req_common, 0, KIND_SYNACK);
}

/* tp_btf: BTF-typed arguments, direct reads. */
SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(tr_btf_retransmit, const struct sock *sk, const struct sk_buff *skb)
{
	return on_retransmit(sk, skb);
}

SEC("tp_btf/tcp_retransmit_synack")
int BPF_PROG(tr_btf_synack, const struct sock *sk, const struct request_sock *req)
{
	return on_synack(req);
}

SEC("tp_btf/tcp_sendmsg_locked")
int BPF_PROG(tr_btf_sendmsg, const struct sock *sk)
{
	note_owner(sk);
	return 0;
}

/* raw_tp: the same arguments, untyped. */
SEC("raw_tp/tcp_retransmit_skb")
int BPF_PROG(tr_raw_retransmit, const struct sock *sk, const struct sk_buff *skb)
{
	return on_retransmit(sk, skb);
}

SEC("raw_tp/tcp_retransmit_synack")
int BPF_PROG(tr_raw_synack, const struct sock *sk, const struct request_sock *req)
{
	return on_synack(req);
}

SEC("raw_tp/tcp_sendmsg_locked")
int BPF_PROG(tr_raw_sendmsg, const struct sock *sk)
{
	note_owner(sk);
	return 0;
}

/* Classic tracepoints: the record's layout up to the socket pointer has
 * been the same since these tracepoints were added; the rest comes from
 * the socket, as above. */
struct tp_sk_skb {
	__u64 common;
	const struct sk_buff *skbaddr;
	const struct sock *skaddr;
};

struct tp_synack {
	__u64 common;
	const struct sock *skaddr;
	const struct request_sock *req;
};

SEC("tracepoint/tcp/tcp_retransmit_skb")
int tr_tp_retransmit(struct tp_sk_skb *ctx)
{
	return on_retransmit(ctx->skaddr, ctx->skbaddr);
}

SEC("tracepoint/tcp/tcp_retransmit_synack")
int tr_tp_synack(struct tp_synack *ctx)
{
	return on_synack(ctx->req);
}

/* Tail loss probes: no tracepoint, so fentry or a kprobe, where present. */
SEC("fentry/tcp_send_loss_probe")
int BPF_PROG(tr_fentry_tlp, struct sock *sk)
{
	return report(&sk->__sk_common, 0, KIND_LOSS_PROBE);
}

SEC("kprobe/tcp_send_loss_probe")
int BPF_KPROBE(tr_kprobe_tlp, struct sock *sk)
{
	return report(&sk->__sk_common, 0, KIND_LOSS_PROBE);
}

/* Keeps the enums in BTF for the front end. */
enum tcpretrans_error tcpretrans_error_btf;
enum retrans_kind retrans_kind_btf;

char LICENSE[] SEC("license") = "GPL";
