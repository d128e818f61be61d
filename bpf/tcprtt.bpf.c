// SPDX-License-Identifier: GPL-2.0
/* tcprtt: TCP smoothed round trip times as log2 histograms, in the kernel.
 * tcp:tcp_probe runs at the top of tcp_rcv_established, for every segment
 * an established socket receives on its fast path: BCC's and libbpf-tools'
 * hook point, reached without a kprobe or fentry. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tcprtt.h"
#include "hist.h"
#include "bits.bpf.h"
#include "maps.bpf.h"
#include "errors.bpf.h"
#include "tcpsock.bpf.h"

const volatile bool fine = false;
/* Milliseconds (-m), else microseconds. */
const volatile bool in_ms = false;
/* 1: a histogram per local address (-b); 2: per remote address (-B). */
const volatile __u8 key_by = 0;
const volatile bool per_container = false;
/* -a / -A: only this local / remote address (family 0: any). */
const volatile __u16 laddr_family = 0;
const volatile __u8 laddr[16] = {};
const volatile __u16 raddr_family = 0;
const volatile __u8 raddr[16] = {};

HIST_MAPS(struct rtt_key, struct hist, 4096);

static __always_inline bool addr_is(const struct flow *f, __u16 family, const volatile __u8 *want,
				    const __u8 *have)
{
	int i, n = family == AF_INET ? 4 : 16;

	if (!family)
		return true;
	if (f->family != family)
		return false;
	for (i = 0; i < 16; i++) {
		if (i < n && have[i] != want[i])
			return false;
	}
	return true;
}

static __always_inline int on_probe(const struct sock *sk)
{
	struct rtt_key key = {};
	struct fine_hist *fh = 0;
	struct flow f = {};
	struct hist *h;
	__u64 srtt;

	if (!read_flow(sk, &f))
		return 0;
	if (!lport_allowed(f.lport) || !dport_allowed(f.dport) || !sock_cgroup_allowed(sk))
		return 0;
	if (!addr_is(&f, laddr_family, laddr, f.saddr) || !addr_is(&f, raddr_family, raddr, f.daddr))
		return 0;
	/* srtt_us holds 8 times the smoothed RTT in microseconds. */
	srtt = BPF_CORE_READ((const struct tcp_sock *)sk, srtt_us) >> 3;
	if (in_ms)
		srtt /= 1000;
	if (key_by) {
		key.family = f.family;
		__builtin_memcpy(key.addr, key_by == 1 ? f.saddr : f.daddr, sizeof(key.addr));
	}
	if (per_container)
		key.cgroup_id = sock_cgroup_id(sk);
	h = lookup_or_try_init(&hists, &key, &zero_hist);
	if (!h) {
		count_error(ERR_HISTS_FULL);
		return 0;
	}
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &key, &zero_fine);
	hist_add(h, fh, srtt);
	return 0;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(rtt_btf, struct sock *sk, struct sk_buff *skb)
{
	return on_probe(sk);
}

SEC("raw_tp/tcp_probe")
int BPF_PROG(rtt_raw, struct sock *sk, struct sk_buff *skb)
{
	return on_probe(sk);
}

/* Keeps the enum in BTF for the front end. */
enum tcprtt_error tcprtt_error_btf;

char LICENSE[] SEC("license") = "GPL";
