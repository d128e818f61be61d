/* Sockets seen from a system call (bind, listen): the struct sock behind the
 * current task's descriptor, its local endpoint and the options that change
 * what bind() does. For the tools that trace the calls at their
 * tracepoints, where the kernel offers no kprobe or fentry on inet_bind or
 * inet_listen. After files.bpf.h (fd_file), which the front end sets up. */
#ifndef __SOCKETS_BPF_H
#define __SOCKETS_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include "files.bpf.h"

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

#define S_IFMT_ 00170000
#define S_IFSOCK_ 0140000

/* The socket behind descriptor `fd` of the current task, or NULL where it
 * is no socket (a socket file's private data is its struct socket). */
static __always_inline struct sock *fd_sock(long fd)
{
	struct file *f = fd_file(fd);
	struct socket *sock;

	if (!f)
		return 0;
	if ((BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT_) != S_IFSOCK_)
		return 0;
	sock = BPF_CORE_READ(f, private_data);
	return sock ? BPF_CORE_READ(sock, sk) : 0;
}

/* Its local address (network order; IPv4 in the first 4 bytes) and port
 * (host order), as bound; false where it is no IPv4 or IPv6 socket. */
static __always_inline bool sock_local(const struct sock *sk, __u16 *family, __u8 addr[16],
				       __u16 *port)
{
	*family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (*family == AF_INET)
		bpf_core_read(addr, 4, &sk->__sk_common.skc_rcv_saddr);
	else if (*family == AF_INET6)
		bpf_core_read(addr, 16, &sk->__sk_common.skc_v6_rcv_saddr);
	else
		return false;
	*port = bpf_ntohs(BPF_CORE_READ((const struct inet_sock *)sk, inet_sport));
	return true;
}

/* The address and port a bind() or connect() asked for, from the caller's
 * struct sockaddr (`len` bytes at `uaddr`); false where it is no IPv4 or
 * IPv6 address or cannot be read. */
static __always_inline bool user_sockaddr(const void *uaddr, long len, __u16 *family,
					  __u8 addr[16], __u16 *port)
{
	/* sockaddr_in6: family, port, flow info, address, scope. */
	struct {
		__u16 family;
		__u16 port;
		__u32 flowinfo;
		__u8 addr[16];
	} sa = {};

	if (!uaddr || len < 8)
		return false;
	if (bpf_probe_read_user(&sa, len < (long)sizeof(sa) ? 8 : sizeof(sa), uaddr))
		return false;
	*family = sa.family;
	*port = bpf_ntohs(sa.port);
	if (sa.family == AF_INET) {
		/* sockaddr_in: family, port, address. */
		__builtin_memcpy(addr, &sa.flowinfo, 4);
		return true;
	}
	if (sa.family == AF_INET6 && len >= (long)sizeof(sa)) {
		__builtin_memcpy(addr, sa.addr, 16);
		return true;
	}
	return false;
}

/* The options that change what bind() does, as BCC's bindsnoop shows them
 * (its OPTS column, "FTNRr"). */
#define BIND_OPT_FREEBIND 1
#define BIND_OPT_TRANSPARENT 2
#define BIND_OPT_NO_PORT 4
#define BIND_OPT_REUSEADDR 8
#define BIND_OPT_REUSEPORT 16

/* Before 6.6 the IP options were bitfields of inet_sock; since, bits of
 * inet_flags, whose enum the kernel leaves anonymous (no CO-RE relocation
 * can name it): its values, unchanged since. Each option read where its
 * kernel keeps it. */
struct inet_sock___bits {
	__u8 freebind : 1;
	__u8 transparent : 1;
	__u8 bind_address_no_port : 1;
} __attribute__((preserve_access_index));

#define INET_FLAG_FREEBIND 11
#define INET_FLAG_TRANSPARENT 15
#define INET_FLAG_BIND_ADDRESS_NO_PORT 18

#define INET_OPTION(sk, field, bit)                                               \
	({                                                                        \
		struct inet_sock___bits *b_ = (void *)(sk);                       \
		bool on_ = false;                                                 \
		if (bpf_core_field_exists(b_->field))                             \
			on_ = BPF_CORE_READ_BITFIELD_PROBED(b_, field);           \
		else if (bpf_core_field_exists(struct inet_sock, inet_flags))     \
			on_ = BPF_CORE_READ((struct inet_sock *)(sk), inet_flags) >>  \
				      (bit) & 1;                                  \
		on_;                                                              \
	})

static __always_inline __u8 bind_options(const struct sock *sk)
{
	__u8 opts = 0;

	if (INET_OPTION(sk, freebind, INET_FLAG_FREEBIND))
		opts |= BIND_OPT_FREEBIND;
	if (INET_OPTION(sk, transparent, INET_FLAG_TRANSPARENT))
		opts |= BIND_OPT_TRANSPARENT;
	if (INET_OPTION(sk, bind_address_no_port, INET_FLAG_BIND_ADDRESS_NO_PORT))
		opts |= BIND_OPT_NO_PORT;
	if (BPF_CORE_READ_BITFIELD_PROBED(sk, __sk_common.skc_reuse))
		opts |= BIND_OPT_REUSEADDR;
	if (BPF_CORE_READ_BITFIELD_PROBED(sk, __sk_common.skc_reuseport))
		opts |= BIND_OPT_REUSEPORT;
	return opts;
}

/* The socket's network namespace (its inode number, as `ip netns` and
 * /proc/PID/ns/net show it). */
static __always_inline __u32 sock_netns(const struct sock *sk)
{
	return BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
}

#endif
