/* Kernel fields and tracepoints that were renamed or moved, behind CO-RE
 * flavours: each helper works on kernels before and after the change. */
#ifndef __CORE_FIXES_BPF_H
#define __CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>
#include "block.h"

/* task_struct::state became __state in 5.14, commit 2f064a59a11f
 * ("sched: Change task_struct::state"). */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

/* request::rq_disk was removed in 5.17, commit f3fa33acca9f ("block: remove
 * the ->rq_disk field in struct request"); the disk is rq->q->disk since. */
struct request___pre517 {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline struct gendisk *request_disk(struct request *rq)
{
	struct request___pre517 *old = (void *)rq;

	if (bpf_core_field_exists(old->rq_disk))
		return BPF_CORE_READ(old, rq_disk);
	return BPF_CORE_READ(rq, q, disk);
}

/* bio::bi_disk became bi_bdev in 5.12, commit 309dca309fc3 ("block: store
 * a block_device pointer in struct bio"). */
struct bio___pre512 {
	struct gendisk *bi_disk;
} __attribute__((preserve_access_index));

/* The disk a bio is sent to. */
static __always_inline struct gendisk *bio_disk(struct bio *bio)
{
	struct bio___pre512 *old = (void *)bio;

	if (bpf_core_field_exists(old->bi_disk))
		return BPF_CORE_READ(old, bi_disk);
	return BPF_CORE_READ(bio, bi_bdev, bd_disk);
}

/* The request's whole disk as the kernel's dev_t (block.h's encoding); 0
 * when it has none. */
static __always_inline __u32 request_dev(struct request *rq)
{
	struct gendisk *disk = request_disk(rq);

	if (!disk)
		return 0;
	return (BPF_CORE_READ(disk, major) << BLK_MINORBITS) | BPF_CORE_READ(disk, first_minor);
}

#endif
