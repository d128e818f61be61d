// SPDX-License-Identifier: GPL-2.0
/* tcptop: TCP bytes sent and received per process and connection, summed
 * in the kernel. Variants: the socket layer's sock:sock_send_length and
 * sock_recv_length tracepoints (6.3+: bytes actually moved, in the caller's
 * context), else fexit on tcp_sendmsg and tcp_recvmsg (tcp_recvmsg lost an
 * argument in 5.19: a program for each form), else kprobes with their
 * kretprobes. Never tcp_cleanup_rbuf, which runs more than once per read
 * with a running total (BCC #5352). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tcptop.h"
#include "filters.bpf.h"
#include "errors.bpf.h"
#include "maps.bpf.h"
#include "tcpsock.bpf.h"

#define MSG_PEEK 2

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct conn_key);
	__type(value, struct conn_bytes);
} conns SEC(".maps");

/* kprobe mode: the socket of each thread inside tcp_sendmsg/tcp_recvmsg. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} inside SEC(".maps");

static __always_inline int count(const struct sock *sk, long bytes, bool sent)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct conn_key key = {};
	struct conn_bytes *c, zero = {};

	if (bytes <= 0 || !task_allowed(id) || !cgroup_allowed())
		return 0;
	if (!read_flow(sk, &key.flow))
		return 0;
	key.pid = id >> 32;
	c = bpf_map_lookup_elem(&conns, &key);
	if (!c) {
		bpf_get_current_comm(&zero.comm, sizeof(zero.comm));
		zero.cgroup_id = bpf_get_current_cgroup_id();
		bpf_map_update_elem(&conns, &key, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&conns, &key);
		if (!c) {
			count_error(ERR_CONNS_FULL);
			return 0;
		}
	}
	if (sent)
		__sync_fetch_and_add(&c->sent, bytes);
	else
		__sync_fetch_and_add(&c->received, bytes);
	return 0;
}

/* The socket layer's tracepoints: every family and protocol, so TCP only;
 * a MSG_PEEK read moves nothing. */
SEC("tp_btf/sock_send_length")
int BPF_PROG(tt_send_btf, struct sock *sk, int ret, int flags)
{
	if (!sock_is_tcp(sk))
		return 0;
	return count(sk, ret, true);
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(tt_recv_btf, struct sock *sk, int ret, int flags)
{
	if ((flags & MSG_PEEK) || !sock_is_tcp(sk))
		return 0;
	return count(sk, ret, false);
}

SEC("fexit/tcp_sendmsg")
int BPF_PROG(tt_fexit_send, struct sock *sk, struct msghdr *msg, size_t size, int ret)
{
	return count(sk, ret, true);
}

/* 5.19+: tcp_recvmsg(sk, msg, len, flags, addr_len). */
SEC("fexit/tcp_recvmsg")
int BPF_PROG(tt_fexit_recv5, struct sock *sk, struct msghdr *msg, size_t len, int flags,
	     int *addr_len, int ret)
{
	if (flags & MSG_PEEK)
		return 0;
	return count(sk, ret, false);
}

/* Before: tcp_recvmsg(sk, msg, len, nonblock, flags, addr_len). */
SEC("fexit/tcp_recvmsg")
int BPF_PROG(tt_fexit_recv6, struct sock *sk, struct msghdr *msg, size_t len, int nonblock,
	     int flags, int *addr_len, int ret)
{
	if (flags & MSG_PEEK)
		return 0;
	return count(sk, ret, false);
}

static __always_inline int enter(struct sock *sk)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 val = (__u64)sk;

	bpf_map_update_elem(&inside, &tid, &val, BPF_ANY);
	return 0;
}

static __always_inline int leave(long ret, bool sent)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *skp = bpf_map_lookup_elem(&inside, &tid);
	const struct sock *sk;

	if (!skp)
		return 0;
	sk = (const struct sock *)*skp;
	bpf_map_delete_elem(&inside, &tid);
	return count(sk, ret, sent);
}

SEC("kprobe/tcp_sendmsg")
int BPF_KPROBE(tt_kprobe_send, struct sock *sk)
{
	return enter(sk);
}

SEC("kretprobe/tcp_sendmsg")
int BPF_KRETPROBE(tt_kretprobe_send, int ret)
{
	return leave(ret, true);
}

/* A MSG_PEEK read is counted in this mode (its flags are not kept). */
SEC("kprobe/tcp_recvmsg")
int BPF_KPROBE(tt_kprobe_recv, struct sock *sk)
{
	return enter(sk);
}

SEC("kretprobe/tcp_recvmsg")
int BPF_KRETPROBE(tt_kretprobe_recv, int ret)
{
	return leave(ret, false);
}

/* Keeps the enum in BTF for the front end. */
enum tcptop_error tcptop_error_btf;

char LICENSE[] SEC("license") = "GPL";
