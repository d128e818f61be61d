// SPDX-License-Identifier: GPL-2.0
/* tcpsubnet: TCP bytes sent, summed per destination subnet (the first of
 * the list that holds the connection's remote address), as running totals
 * per CPU that the front end turns into each interval's.
 *
 * Variants, as tcptop's: the socket layer's sock:sock_send_length
 * tracepoint (6.3+: bytes actually sent, in the sender's context), else
 * fexit on tcp_sendmsg, else a kprobe and its kretprobe. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tcpsubnet.h"
#include "filters.bpf.h"
#include "tcpsock.bpf.h"

const volatile struct subnet subnets[MAX_SUBNETS] = {};
const volatile __u32 nr_subnets = 0;

/* Bytes sent to each subnet, by its index; never cleared. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_SUBNETS);
	__type(key, __u32);
	__type(value, __u64);
} sent SEC(".maps");

/* kprobe mode: the socket of each thread inside tcp_sendmsg. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} inside SEC(".maps");

static __always_inline int count(const struct sock *sk, long bytes)
{
	__u32 addr[4] = {}, family, i, w;
	__u64 *total;

	if (bytes <= 0 || !task_allowed(bpf_get_current_pid_tgid()) || !cgroup_allowed())
		return 0;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family == AF_INET) {
		addr[0] = BPF_CORE_READ(sk, __sk_common.skc_daddr);
	} else if (family == AF_INET6) {
		bpf_core_read(addr, sizeof(addr), &sk->__sk_common.skc_v6_daddr);
		/* An IPv4 peer of a dual-stack socket (::ffff:a.b.c.d): the
		 * IPv4 subnets hold it. */
		if (!addr[0] && !addr[1] && addr[2] == bpf_htonl(0xffff)) {
			family = AF_INET;
			addr[0] = addr[3];
			addr[1] = addr[2] = addr[3] = 0;
		}
	} else {
		return 0;
	}
	for (i = 0; i < MAX_SUBNETS; i++) {
		bool in = true;

		if (i >= nr_subnets)
			return 0;
		if (subnets[i].family != family)
			continue;
		for (w = 0; w < 4; w++)
			if ((addr[w] & subnets[i].mask[w]) != subnets[i].addr[w])
				in = false;
		if (!in)
			continue;
		total = bpf_map_lookup_elem(&sent, &i);
		if (total)
			__sync_fetch_and_add(total, bytes);
		return 0;
	}
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(ts_send_btf, struct sock *sk, int ret, int flags)
{
	if (!sock_is_tcp(sk))
		return 0;
	return count(sk, ret);
}

SEC("fexit/tcp_sendmsg")
int BPF_PROG(ts_fexit_send, struct sock *sk, struct msghdr *msg, size_t size, int ret)
{
	return count(sk, ret);
}

SEC("kprobe/tcp_sendmsg")
int BPF_KPROBE(ts_kprobe_send, struct sock *sk)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 val = (__u64)sk;

	bpf_map_update_elem(&inside, &tid, &val, BPF_ANY);
	return 0;
}

SEC("kretprobe/tcp_sendmsg")
int BPF_KRETPROBE(ts_kretprobe_send, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *skp = bpf_map_lookup_elem(&inside, &tid);
	const struct sock *sk;

	if (!skp)
		return 0;
	sk = (const struct sock *)*skp;
	bpf_map_delete_elem(&inside, &tid);
	return count(sk, ret);
}

char LICENSE[] SEC("license") = "GPL";
