// SPDX-License-Identifier: GPL-2.0
/* bindsnoop: bind() of IPv4 and IPv6 sockets, each at its return: the
 * address and port bound (or asked for, where it failed), the protocol, the
 * options that change what bind() does, the interface and the result.
 *
 * At the call's own tracepoints where the kernel has them, else tp_btf
 * sys_enter/sys_exit testing the call's number (BCC and libbpf-tools use
 * kprobes or fentry on inet_bind/inet6_bind, which this needs neither of).
 * The socket is the descriptor's, read at the return: what the kernel
 * bound it to, the port it picked where 0 was asked. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "bindsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "errors.bpf.h"
#include "maps.bpf.h"
#include "syscalls.bpf.h"
#include "callset.bpf.h"
#include "callstash.bpf.h"
#include "sockets.bpf.h"
#include "tcpsock.bpf.h"

/* -E/-x: failed binds too. */
const volatile bool show_errors = false;
/* --count: count per address and port in the kernel instead of events. */
const volatile bool count_binds = false;

enum { BIND_CALL, BIND_CALLS };
CALL_SET(BIND_CALLS)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct count_key);
	__type(value, __u64);
} counts SEC(".maps");

struct event event_layout = {};
enum bindsnoop_error bindsnoop_error_btf;

struct start {
	__u64 ts;
	__u64 fd;
	__u8 addr[16];
	__u16 family;
	__u16 port;
	__u32 uid;
};

CALL_STASH(struct start)

static __always_inline void entered(__u32 call, __u64 fd, __u64 uaddr, __u64 len)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 uid = (__u32)bpf_get_current_uid_gid();
	struct start s = { .fd = fd, .uid = uid };

	if (!task_allowed(id) || !uid_allowed(uid) || !cgroup_allowed())
		return;
	/* What was asked, for a failure (the socket then keeps none of it). */
	user_sockaddr((const void *)uaddr, (long)len, &s.family, s.addr, &s.port);
	s.ts = bpf_ktime_get_ns();
	stash_call(&s);
}

static __always_inline void count(const struct event *e)
{
	static const __u64 zero;
	struct count_key k = {};
	__u64 *n;

	k.family = e->family;
	k.port = e->port;
	__builtin_memcpy(k.addr, e->addr, sizeof(k.addr));
	n = lookup_or_try_init(&counts, &k, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		count_error(ERR_COUNTS_FULL);
}

static __always_inline void exited(long ret)
{
	__u64 now = bpf_ktime_get_ns();
	struct event e = {};
	struct start s;
	struct sock *sk;

	if (!take_call(&s))
		return;
	if (ret && !show_errors)
		return;
	sk = fd_sock((long)(int)s.fd);
	if (!sk)
		return;
	if (ret == 0) {
		if (!sock_local(sk, &e.family, e.addr, &e.port))
			return;
	} else {
		/* Nothing bound: what was asked, where it is an inet address
		 * asked of an inet socket. */
		e.family = BPF_CORE_READ(sk, __sk_common.skc_family);
		if ((e.family != AF_INET && e.family != AF_INET6) || s.family != e.family)
			return;
		__builtin_memcpy(e.addr, s.addr, sizeof(e.addr));
		e.port = s.port;
	}
	if ((target_family && e.family != target_family) || !lport_allowed(e.port))
		return;
	e.protocol = BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol);
	e.opts = bind_options(sk);
	e.bound_dev_if = BPF_CORE_READ(sk, __sk_common.skc_bound_dev_if);
	e.netns = sock_netns(sk);
	if (count_binds) {
		count(&e);
		return;
	}
	task_header_now(&e.task);
	e.task.ts_ns = now;
	e.latency_ns = now - s.ts;
	e.ret = ret;
	e.uid = s.uid;
	emit(&e, sizeof(e));
}

#define EXITED(ctx, ret) exited(ret)
CALL_ENTRY(bind, bind, BIND_CALL, 3, entered)
CALL_EXIT(bind, bind, EXITED)
CALL_SET_BTF_ENTRY(bind_btf_enter, entered)
CALL_SET_BTF_EXIT(bind_btf_exit, EXITED)

char LICENSE[] SEC("license") = "GPL";
