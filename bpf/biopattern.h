/* Shared by biopattern.bpf.c and the biopattern front end. */
#ifndef __BIOPATTERN_H
#define __BIOPATTERN_H

/* A disk's completions since tracing began: the kernel keeps running
 * totals (the front end reports each interval's share), and where the last
 * one ended. */
struct pattern {
	__u64 sequential;
	__u64 random;
	__u64 bytes;
	/* The sector after the last completion's, 0 before the first. */
	__u64 next_sector;
};

#endif
