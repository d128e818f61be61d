// SPDX-License-Identifier: GPL-2.0
/* solisten: listen() of IPv4 and IPv6 sockets, each at its return: the
 * address and port the socket listens on (the port listen() picked where
 * the socket was not bound), the backlog in force and the result.
 *
 * At the call's own tracepoints where the kernel has them, else tp_btf
 * sys_enter/sys_exit testing the call's number (BCC and libbpf-tools use
 * kprobes or fentry on inet_listen, which this needs neither of). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "solisten.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"
#include "callset.bpf.h"
#include "callstash.bpf.h"
#include "sockets.bpf.h"
#include "tcpsock.bpf.h"

/* -x: failed calls only. */
const volatile bool failed_only = false;
/* -n: this network namespace only (its inode number); 0: any. */
const volatile __u32 target_netns = 0;

enum { LISTEN_CALL, LISTEN_CALLS };
CALL_SET(LISTEN_CALLS)

struct event event_layout = {};

struct start {
	__u64 ts;
	__u64 fd;
	__s64 backlog;
};

CALL_STASH(struct start)

static __always_inline void entered(__u32 call, __u64 fd, __u64 backlog, __u64 unused)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct start s = { .fd = fd, .backlog = (int)backlog };

	if (!task_allowed(id) || !cgroup_allowed())
		return;
	s.ts = bpf_ktime_get_ns();
	stash_call(&s);
}

static __always_inline void exited(long ret)
{
	__u64 now = bpf_ktime_get_ns();
	struct event e = {};
	struct start s;
	struct sock *sk;

	if (!take_call(&s))
		return;
	if (failed_only && !ret)
		return;
	sk = fd_sock((long)(int)s.fd);
	if (!sk || !sock_local(sk, &e.family, e.addr, &e.port))
		return;
	if ((target_family && e.family != target_family) || !lport_allowed(e.port))
		return;
	e.netns = sock_netns(sk);
	if (target_netns && e.netns != target_netns)
		return;
	e.protocol = BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol);
	e.sock_type = BPF_CORE_READ_BITFIELD_PROBED(sk, sk_type);
	e.asked = s.backlog;
	/* u16 before 5.5's u32: read at its size either way. */
	e.backlog = ret ? s.backlog : BPF_CORE_READ_BITFIELD_PROBED(sk, sk_max_ack_backlog);
	task_header_now(&e.task);
	e.task.ts_ns = now;
	e.latency_ns = now - s.ts;
	e.ret = ret;
	emit(&e, sizeof(e));
}

#define EXITED(ctx, ret) exited(ret)
CALL_ENTRY(listen, listen, LISTEN_CALL, 2, entered)
CALL_EXIT(listen, listen, EXITED)
CALL_SET_BTF_ENTRY(listen_btf_enter, entered)
CALL_SET_BTF_EXIT(listen_btf_exit, EXITED)

char LICENSE[] SEC("license") = "GPL";
