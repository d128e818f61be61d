// SPDX-License-Identifier: GPL-2.0
/* tcpsynbl: the listen backlog (connections waiting for accept()) at each
 * new connection, as log2 histograms per backlog limit.
 *
 * BCC reads the listener at tcp_v4/v6_syn_recv_sock by kprobe. With no
 * kprobe or fentry, the same moment has a tracepoint: the handshake's new
 * socket is a copy of its listener (sk_clone_lock), made in that function,
 * and its state change LISTEN -> SYN_RECV (inet_csk_clone_lock) is
 * sock:inet_sock_set_state. The copy carries the listener's backlog and
 * limit as they were; the connection is queued on the listener after. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tcpsynbl.h"
#include "hist.h"
#include "bits.bpf.h"
#include "errors.bpf.h"
#include "maps.bpf.h"
#include "tcpsock.bpf.h"

const volatile bool fine = false;
const volatile bool per_container = false;
const volatile bool per_port = false;

HIST_MAPS(struct backlog_key, struct hist, 1024);

static __always_inline int on_state(const struct sock *sk, int oldstate, int newstate)
{
	struct backlog_key key = {};
	struct fine_hist *fh = 0;
	struct hist *h;
	__u16 family, port;

	if (oldstate != TCP_LISTEN || newstate != TCP_SYN_RECV || !sock_is_tcp(sk))
		return 0;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (target_family && family != target_family)
		return 0;
	/* The copy's bound port is the listener's. */
	port = BPF_CORE_READ(sk, __sk_common.skc_num);
	if (!lport_allowed(port) || !sock_cgroup_allowed(sk))
		return 0;
	key.backlog_max = BPF_CORE_READ(sk, sk_max_ack_backlog);
	if (per_port)
		key.port = port;
	if (per_container)
		key.cgroup_id = sock_cgroup_id(sk);
	h = lookup_or_try_init(&hists, &key, &zero_hist);
	if (!h) {
		count_error(ERR_HISTS_FULL);
		return 0;
	}
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &key, &zero_fine);
	hist_add(h, fh, BPF_CORE_READ(sk, sk_ack_backlog));
	return 0;
}

STATE_CHANGE_PROGRAMS(on_state)

/* Keeps the enum in BTF for the front end. */
enum tcpsynbl_error tcpsynbl_error_btf;

char LICENSE[] SEC("license") = "GPL";
