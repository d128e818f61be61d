// SPDX-License-Identifier: GPL-2.0
/* tcptracer: each TCP connection's connect, accept and close, with the
 * process that made it, from tracepoints alone (BCC's needs kprobes):
 *
 * - connect: the state change CLOSE -> SYN_SENT runs in connect(), in the
 *   caller: its task is kept by socket, and the connect shown when the
 *   handshake completes (SYN_SENT -> ESTABLISHED, in softirq), as BCC
 *   shows it; a failed handshake shows nothing.
 * - accept: accept() and accept4() at their return (their own tracepoints,
 *   else tp_btf sys_exit), the new socket read behind the descriptor: the
 *   state change to ESTABLISHED runs in softirq, before any process has it.
 * - close: the first change out of ESTABLISHED or CLOSE_WAIT toward the
 *   end: FIN_WAIT1 or LAST_ACK, made by close() or shutdown() in the
 *   process, or CLOSE (an abort: in the process that closed with unread
 *   data, or in softirq as a reset arrives, where the connection's owner,
 *   kept since its connect or accept, is shown instead). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "tcptracer.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"
#include "callset.bpf.h"
#include "tcpsock.bpf.h"
#include "sockets.bpf.h"

/* -N: this network namespace only (its inode number); 0: any. */
const volatile __u32 target_netns = 0;

enum { ACCEPT_CALL, ACCEPT4_CALL, ACCEPT_CALLS };
CALL_SET(ACCEPT_CALLS)

struct event event_layout = {};
enum tcp_event_type tcp_event_type_btf;

/* Each connection's owner: the connecting task from SYN_SENT, the
 * accepting one from accept(); LRU: connections open when tracing began
 * close unseen, or never. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct owner);
} owners SEC(".maps");

/* The socket's part of an event, and its filters; false if it is not
 * traced. */
static __always_inline bool socket_part(const struct sock *sk, struct event *e)
{
	if (!sock_is_tcp(sk) || !read_flow(sk, &e->flow))
		return false;
	e->netns = sock_netns(sk);
	if (target_netns && e->netns != target_netns)
		return false;
	return sock_cgroup_allowed(sk);
}

/* The current task as an event's or an owner's (its filters applied);
 * false if it is not traced. */
static __always_inline bool current_task(struct task_header *task, __u32 *uid)
{
	*uid = (__u32)bpf_get_current_uid_gid();
	if (!task_allowed(bpf_get_current_pid_tgid()) || !uid_allowed(*uid))
		return false;
	task_header_now(task);
	return true;
}

/* The owner's part of an event (its filters applied); false if it is not
 * traced. */
static __always_inline bool owner_part(const struct owner *o, struct event *e)
{
	__builtin_memcpy(&e->task, &o->task, sizeof(e->task));
	e->uid = o->uid;
	return ids_allowed(((__u64)o->task.pid << 32) | o->task.tid) && not_self(o->task.pid) &&
	       uid_allowed(o->uid);
}

static __always_inline void send(struct event *e, __u8 type)
{
	e->kind = type;
	e->task.ts_ns = bpf_ktime_get_ns();
	emit(e, sizeof(*e));
}

static __always_inline int on_state(const struct sock *sk, int oldstate, int newstate)
{
	__u64 key = (__u64)sk;
	struct owner *owner;
	struct event e;

	if (newstate == TCP_SYN_SENT) {
		struct owner o = {};

		if (sock_is_tcp(sk) && current_task(&o.task, &o.uid))
			bpf_map_update_elem(&owners, &key, &o, BPF_ANY);
		return 0;
	}
	if (oldstate == TCP_SYN_SENT && newstate == TCP_ESTABLISHED) {
		owner = bpf_map_lookup_elem(&owners, &key);
		if (!owner)
			return 0;
		__builtin_memset(&e, 0, sizeof(e));
		if (owner_part(owner, &e) && socket_part(sk, &e))
			send(&e, TCP_EVENT_CONNECT);
		return 0;
	}
	if (oldstate != TCP_ESTABLISHED && oldstate != TCP_CLOSE_WAIT) {
		if (newstate == TCP_CLOSE)
			bpf_map_delete_elem(&owners, &key);
		return 0;
	}
	if (newstate != TCP_FIN_WAIT1 && newstate != TCP_LAST_ACK && newstate != TCP_CLOSE)
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	if (!socket_part(sk, &e))
		goto done;
	owner = bpf_map_lookup_elem(&owners, &key);
	if (newstate == TCP_CLOSE && owner) {
		/* Perhaps in softirq (a reset): the owner, not whoever ran. */
		e.by_owner = 1;
		if (!owner_part(owner, &e))
			goto done;
	} else if (!current_task(&e.task, &e.uid)) {
		goto done;
	}
	send(&e, TCP_EVENT_CLOSE);
done:
	if (newstate == TCP_CLOSE)
		bpf_map_delete_elem(&owners, &key);
	return 0;
}

STATE_CHANGE_PROGRAMS(on_state)

/* accept()'s return: the new socket behind the descriptor. */
static __always_inline void accepted(long fd)
{
	struct owner o = {};
	struct event e;
	struct sock *sk;
	__u64 key;

	if (fd < 0)
		return;
	sk = fd_sock(fd);
	if (!sk)
		return;
	__builtin_memset(&e, 0, sizeof(e));
	if (!socket_part(sk, &e) || !current_task(&e.task, &e.uid))
		return;
	key = (__u64)sk;
	o.task = e.task;
	o.uid = e.uid;
	bpf_map_update_elem(&owners, &key, &o, BPF_ANY);
	send(&e, TCP_EVENT_ACCEPT);
}

#define EXITED(ctx, ret) accepted(ret)
CALL_EXIT(tt, accept, EXITED)
CALL_EXIT(tt, accept4, EXITED)
CALL_SET_BTF_EXIT(tt_btf_exit, EXITED)

char LICENSE[] SEC("license") = "GPL";
