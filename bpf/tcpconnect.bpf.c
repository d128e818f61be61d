// SPDX-License-Identifier: GPL-2.0
/* tcpconnect: active TCP connects. Variants: fexit on tcp_v4_connect /
 * tcp_v6_connect (shown when they return 0, with the local port the
 * kernel picked), else kprobes + kretprobes on them, else the state
 * change CLOSE -> SYN_SENT, which runs inside connect() in the caller
 * (before the local port is picked: where it is wanted, the connect is
 * shown at its next state change instead). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tcpconnect.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "errors.bpf.h"
#include "maps.bpf.h"
#include "tcpsock.bpf.h"

/* -c: count per destination in the kernel instead of sending events. */
const volatile bool count_connects = false;
/* State mode: hold each connect until the local port is known (-L). */
const volatile bool wait_for_lport = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct count_key);
	__type(value, __u64);
} counts SEC(".maps");

/* kprobe mode: the socket of each thread inside tcp_v*_connect. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} connecting SEC(".maps");

/* State mode with -L: connects seen at SYN_SENT, shown at the next change. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct event);
} pending SEC(".maps");

struct event event_layout = {};

/* In the connecting task: the filters on it, and its part of the event. */
static __always_inline bool caller_allowed(struct event *e)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 uid = (__u32)bpf_get_current_uid_gid();

	if (!task_allowed(id) || !uid_allowed(uid) || !cgroup_allowed())
		return false;
	task_header_now(&e->task);
	e->uid = uid;
	return true;
}

static __always_inline void count(const struct flow *f)
{
	static const __u64 zero;
	struct count_key k = {};
	__u64 *n;

	k.family = f->family;
	k.dport = f->dport;
	__builtin_memcpy(k.saddr, f->saddr, sizeof(k.saddr));
	__builtin_memcpy(k.daddr, f->daddr, sizeof(k.daddr));
	n = lookup_or_try_init(&counts, &k, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		count_error(ERR_COUNTS_FULL);
}

static __always_inline void report(struct event *e)
{
	if (count_connects)
		count(&e->flow);
	else
		emit(e, sizeof(*e));
}

/* A connect that returned 0 (fexit, kretprobe). */
static __always_inline int connected(const struct sock *sk, int ret)
{
	struct event e;

	if (ret)
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	if (!read_flow(sk, &e.flow) || !dport_allowed(e.flow.dport))
		return 0;
	if (!caller_allowed(&e))
		return 0;
	report(&e);
	return 0;
}

SEC("fexit/tcp_v4_connect")
int BPF_PROG(tc_fexit_v4, struct sock *sk, struct sockaddr *uaddr, int addr_len, int ret)
{
	return connected(sk, ret);
}

SEC("fexit/tcp_v6_connect")
int BPF_PROG(tc_fexit_v6, struct sock *sk, struct sockaddr *uaddr, int addr_len, int ret)
{
	return connected(sk, ret);
}

static __always_inline int enter_connect(struct sock *sk)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 val = (__u64)sk;

	bpf_map_update_elem(&connecting, &tid, &val, BPF_ANY);
	return 0;
}

SEC("kprobe/tcp_v4_connect")
int BPF_KPROBE(tc_kprobe_v4, struct sock *sk)
{
	return enter_connect(sk);
}

SEC("kprobe/tcp_v6_connect")
int BPF_KPROBE(tc_kprobe_v6, struct sock *sk)
{
	return enter_connect(sk);
}

static __always_inline int exit_connect(int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *skp = bpf_map_lookup_elem(&connecting, &tid);
	const struct sock *sk;

	if (!skp)
		return 0;
	sk = (const struct sock *)*skp;
	bpf_map_delete_elem(&connecting, &tid);
	return connected(sk, ret);
}

SEC("kretprobe/tcp_v4_connect")
int BPF_KRETPROBE(tc_kretprobe_v4, int ret)
{
	return exit_connect(ret);
}

SEC("kretprobe/tcp_v6_connect")
int BPF_KRETPROBE(tc_kretprobe_v6, int ret)
{
	return exit_connect(ret);
}

/* The state mode. */
static __always_inline int on_state(const struct sock *sk, int oldstate, int newstate)
{
	__u64 key = (__u64)sk;
	struct event e, *held;

	if (newstate == TCP_SYN_SENT) {
		if (!sock_is_tcp(sk))
			return 0;
		__builtin_memset(&e, 0, sizeof(e));
		if (!read_flow(sk, &e.flow) || !dport_allowed(e.flow.dport))
			return 0;
		if (!caller_allowed(&e))
			return 0;
		if (wait_for_lport)
			bpf_map_update_elem(&pending, &key, &e, BPF_ANY);
		else
			report(&e);
		return 0;
	}
	if (!wait_for_lport || oldstate != TCP_SYN_SENT)
		return 0;
	held = bpf_map_lookup_elem(&pending, &key);
	if (!held)
		return 0;
	/* The port the SYN went from: a connect that failed before one was
	 * picked (no free port) sent no SYN and is not shown. */
	held->flow.lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	if (!held->flow.lport)
		held->flow.lport = bpf_ntohs(BPF_CORE_READ((const struct inet_sock *)sk, inet_sport));
	if (held->flow.lport)
		report(held);
	bpf_map_delete_elem(&pending, &key);
	return 0;
}

STATE_CHANGE_PROGRAMS(on_state)

/* Keeps the enum in BTF for the front end. */
enum tcpconnect_error tcpconnect_error_btf;

char LICENSE[] SEC("license") = "GPL";
