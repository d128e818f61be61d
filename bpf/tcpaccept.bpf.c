// SPDX-License-Identifier: GPL-2.0
/* tcpaccept: passive TCP connections, in the process that accepts them.
 * Variants: fexit on inet_csk_accept (its arguments changed in 6.10: two
 * programs, the front end loads the one that matches), else a kretprobe on
 * it, else the accept()/accept4() system calls' exit, the new socket found
 * from the descriptor returned. Never the state change to ESTABLISHED:
 * that runs in softirq, in whatever task it interrupted (BCC #2304). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "tcpaccept.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "tcpsock.bpf.h"
#include "sockets.bpf.h"

struct event event_layout = {};

static __always_inline int accepted(const struct sock *sk)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct event e;

	if (!sk || !sock_is_tcp(sk))
		return 0;
	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	if (!read_flow(sk, &e.flow) || !lport_allowed(e.flow.lport))
		return 0;
	task_header_now(&e.task);
	emit(&e, sizeof(e));
	return 0;
}

/* 6.10+: inet_csk_accept(sk, arg). */
SEC("fexit/inet_csk_accept")
int BPF_PROG(ta_fexit2, struct sock *sk, void *arg, struct sock *ret)
{
	return accepted(ret);
}

/* Before: inet_csk_accept(sk, flags, err, kern). */
SEC("fexit/inet_csk_accept")
int BPF_PROG(ta_fexit4, struct sock *sk, int flags, int *err, bool kern, struct sock *ret)
{
	return accepted(ret);
}

SEC("kretprobe/inet_csk_accept")
int BPF_KRETPROBE(ta_kretprobe, struct sock *ret)
{
	return accepted(ret);
}

/* The system calls' exit: the classic tracepoint's record. */
struct tp_sys_exit {
	__u64 common;
	long id;
	long ret;
};

static __always_inline int accept_returned(long fd)
{
	/* The descriptor accept() just returned: the new socket. */
	return fd < 0 ? 0 : accepted(fd_sock(fd));
}

SEC("tracepoint/syscalls/sys_exit_accept4")
int ta_sys_accept4(struct tp_sys_exit *ctx)
{
	return accept_returned(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_accept")
int ta_sys_accept(struct tp_sys_exit *ctx)
{
	return accept_returned(ctx->ret);
}

char LICENSE[] SEC("license") = "GPL";
