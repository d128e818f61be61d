/* The block tools' shared encodings, kept in BTF by bpf/common.bpf.c so
 * that common::kernel::disks reads them as generated constants. */
#ifndef __BLOCK_H
#define __BLOCK_H

enum block_layout {
	/* The kernel's dev_t: major << MINORBITS | minor
	 * (include/linux/kdev_t.h). */
	BLK_MINORBITS = 20,
	BLK_MINORMASK = (1 << 20) - 1,
	/* The op in the low byte of a request's cmd_flags (REQ_OP_BITS = 8). */
	BLK_OP_MASK = 0xff,
};

#endif
