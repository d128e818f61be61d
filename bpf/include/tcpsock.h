/* A TCP socket's endpoints, as the TCP tools' records carry them. */
#ifndef __TCPSOCK_H
#define __TCPSOCK_H

/* Addresses in network byte order (IPv4 in the first 4 bytes), ports in
 * host order. */
struct flow {
	__u16 family;
	__u16 lport;
	__u16 dport;
	__u16 pad;
	__u8 saddr[16];
	__u8 daddr[16];
};

#endif
