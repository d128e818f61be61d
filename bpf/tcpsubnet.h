/* Shared by tcpsubnet.bpf.c and the tcpsubnet front end. */
#ifndef __TCPSUBNET_H
#define __TCPSUBNET_H

/* The most subnets a run takes. */
#define MAX_SUBNETS 64

/* A subnet: its address and mask in network order (IPv4 in the first
 * word), the words compared under the mask. */
struct subnet {
	__u32 addr[4];
	__u32 mask[4];
	__u32 family;
	__u32 pad;
};

#endif
