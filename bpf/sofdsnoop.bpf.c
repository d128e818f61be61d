// SPDX-License-Identifier: GPL-2.0
/* sofdsnoop: file descriptors passed over unix sockets (SCM_RIGHTS), each
 * message at the return of the call that sent or received it, with the
 * descriptors' files.
 *
 * BCC probes __scm_send and scm_detach_fds with kprobes. Without them, the
 * calls' own tracepoints (else tp_btf sys_enter/sys_exit): at the return
 * of sendmsg()/sendmmsg() the caller's message is still in its memory, its
 * descriptors in its table; at the return of recvmsg()/recvmmsg() the
 * kernel has written the control data back with the receiver's new
 * descriptors, already installed. So both ends name their files. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "sofdsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"
#include "callset.bpf.h"
#include "callstash.bpf.h"
#include "files.bpf.h"

#define SOL_SOCKET 1
#define SCM_RIGHTS 1
/* The cmsghdr's size, and its data's alignment (x86_64, arm64: 8). */
#define CMSG_HDR 16
#define CMSG_ALIGN(len) (((len) + 7) & ~7UL)
/* Control messages looked at in one message before its descriptors are
 * given up on (SCM_CREDENTIALS and SCM_RIGHTS together are two). */
#define MAX_CMSGS 4

CALL_SET(FD_CALLS)

struct event event_layout = {};
enum fd_call fd_call_btf;

struct start {
	__u64 msg;
	__s32 fd;
	__u32 call;
};

CALL_STASH(struct start)

static __always_inline void entered(__u32 call, __u64 fd, __u64 msg, __u64 unused)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct start s = { .msg = msg, .fd = (int)fd, .call = call };

	if (!task_allowed(id) || !cgroup_allowed())
		return;
	stash_call(&s);
}

/* The inode and super block of the current task's descriptor `fd`. */
static __always_inline bool file_of(int fd, struct passed *p)
{
	struct file *f = fd_file(fd);
	struct inode *inode;
	struct super_block *sb;
	const unsigned char *name;

	if (!f)
		return false;
	inode = BPF_CORE_READ(f, f_inode);
	sb = BPF_CORE_READ(inode, i_sb);
	p->mode = BPF_CORE_READ(inode, i_mode);
	p->ino = BPF_CORE_READ(inode, i_ino);
	p->dev = BPF_CORE_READ(sb, s_dev);
	p->magic = BPF_CORE_READ(sb, s_magic);
	name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	bpf_probe_read_kernel_str(p->name, sizeof(p->name), name);
	return true;
}

/* The user's control data of message `hdr` (at `index` of an mmsg call's
 * vector) on socket `sock_fd`: its first SCM_RIGHTS message's descriptors
 * into a record, sent; 0 where it has none. A global function, verified
 * once on its own: inlined into the loop over an mmsg call's messages, its
 * loops multiplied the verifier's paths (10 s of CPU to load). Scalars
 * only in its arguments (5.10 takes no other). */
__noinline int message(__u64 hdr_addr, __u32 index, __s32 sock_fd, __u32 call, __s64 ret)
{
	void *hdr = (void *)hdr_addr;
	struct {
		void *msg_control;
		__u64 msg_controllen;
	} m;
	struct cmsghdr c;
	__u64 off = 0, count;
	struct event *e;
	int i, fds[MAX_FDS];

	if (bpf_probe_read_user(&m.msg_control, sizeof(m.msg_control),
				hdr + __builtin_offsetof(struct user_msghdr, msg_control)) ||
	    bpf_probe_read_user(&m.msg_controllen, sizeof(m.msg_controllen),
				hdr + __builtin_offsetof(struct user_msghdr, msg_controllen)))
		return 0;
	if (!m.msg_control)
		return 0;
	for (i = 0; i < MAX_CMSGS; i++) {
		if (off + CMSG_HDR > m.msg_controllen)
			return 0;
		if (bpf_probe_read_user(&c, sizeof(c), m.msg_control + off))
			return 0;
		if (c.cmsg_len < CMSG_HDR || off + c.cmsg_len > m.msg_controllen)
			return 0;
		if (c.cmsg_level == SOL_SOCKET && c.cmsg_type == SCM_RIGHTS)
			break;
		off += CMSG_ALIGN(c.cmsg_len);
	}
	if (i == MAX_CMSGS)
		return 0;
	count = (c.cmsg_len - CMSG_HDR) / sizeof(int);
	if (!count)
		return 0;
	__builtin_memset(fds, 0, sizeof(fds));
	if (bpf_probe_read_user(fds, (count < MAX_FDS ? count : MAX_FDS) * sizeof(int),
				m.msg_control + off + CMSG_HDR))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost();
		return 1;
	}
	/* The descriptors' entries are zeroed one by one below (clang will not
	 * expand a memset of the whole record); those past count are not read. */
	__builtin_memset(e, 0, __builtin_offsetof(struct event, fds));
	task_header_now(&e->task);
	e->ret = ret;
	e->sock_fd = sock_fd;
	e->call = call;
	e->msg = index;
	e->count = count;
	{
		struct passed sock = {};

		if (file_of(sock_fd, &sock))
			e->sock_ino = sock.ino;
	}
	for (i = 0; i < MAX_FDS; i++) {
		if (i >= count)
			break;
		__builtin_memset(&e->fds[i], 0, sizeof(e->fds[i]));
		e->fds[i].fd = fds[i];
		file_of(fds[i], &e->fds[i]);
	}
	bpf_ringbuf_submit(e, wakeup_flag());
	return 1;
}

static __always_inline void exited(long ret)
{
	struct start s;
	__u32 i, n = 1;
	bool vec;

	if (!take_call(&s) || ret < 0)
		return;
	vec = s.call == CALL_SENDMMSG || s.call == CALL_RECVMMSG;
	if (vec)
		n = ret;
	for (i = 0; i < MAX_MSGS; i++) {
		if (i >= n)
			break;
		message(s.msg + (vec ? i * sizeof(struct mmsghdr) : 0), i, s.fd, s.call, ret);
	}
}

#define EXITED(ctx, ret) exited(ret)
#define FD_CALL(name, call)                                                         \
	CALL_ENTRY(fd, name, call, 2, entered)                                      \
	CALL_EXIT(fd, name, EXITED)

FD_CALL(sendmsg, CALL_SENDMSG)
FD_CALL(recvmsg, CALL_RECVMSG)
FD_CALL(sendmmsg, CALL_SENDMMSG)
FD_CALL(recvmmsg, CALL_RECVMMSG)
CALL_SET_BTF_ENTRY(fd_btf_enter, entered)
CALL_SET_BTF_EXIT(fd_btf_exit, EXITED)

char LICENSE[] SEC("license") = "GPL";
