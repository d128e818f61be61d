// SPDX-License-Identifier: GPL-2.0
/* mdflush: each flush sent to an md (software RAID) array, with the task
 * that sent it.
 *
 * md_flush_request by fentry or a kprobe where the kernel allows (as BCC
 * and libbpf-tools), else the block layer's block_bio_queue tracepoint
 * (tp_btf, else raw_tp), kept to bios with REQ_PREFLUSH sent to an md
 * device (major 9): the bios md_flush_request is called for (but for a
 * raid5 journal's, which only this mode sees, and dm-raid's and md_d
 * arrays', which only md's function sees). The front end loads one. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "mdflush.h"
#include "block.h"
#include "core_fixes.bpf.h"
#include "events.bpf.h"
#include "filters.bpf.h"
#include "task.bpf.h"

/* include/uapi/linux/major.h */
#define MD_MAJOR 9

/* The record's layout, kept in BTF for the front end. */
struct event event_layout = {};

static __always_inline int flushed(struct gendisk *disk)
{
	struct event e = {};

	if (!disk || !task_allowed(bpf_get_current_pid_tgid()) || !cgroup_allowed())
		return 0;
	task_header_now(&e.task);
	e.dev = (BPF_CORE_READ(disk, major) << BLK_MINORBITS) | BPF_CORE_READ(disk, first_minor);
	BPF_CORE_READ_STR_INTO(&e.disk, disk, disk_name);
	emit(&e, sizeof(e));
	return 0;
}

/* A bio queued to a block device: a flush to an md array is md's. */
static __always_inline int queued(struct bio *bio)
{
	__u32 preflush = 1U << bpf_core_enum_value(enum req_flag_bits, __REQ_PREFLUSH);
	struct gendisk *disk;

	if (!(BPF_CORE_READ(bio, bi_opf) & preflush))
		return 0;
	disk = bio_disk(bio);
	if (!disk || BPF_CORE_READ(disk, major) != MD_MAJOR)
		return 0;
	return flushed(disk);
}

SEC("fentry/md_flush_request")
int BPF_PROG(md_fentry, void *mddev, struct bio *bio)
{
	return flushed(bio_disk(bio));
}

SEC("kprobe/md_flush_request")
int BPF_KPROBE(md_kprobe, void *mddev, struct bio *bio)
{
	return flushed(bio_disk(bio));
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(md_btf_queue, struct bio *bio) { return queued(bio); }
SEC("raw_tp/block_bio_queue")
int BPF_PROG(md_raw_queue, struct bio *bio) { return queued(bio); }

/* Before 5.11 block_bio_queue passed the queue first. */
SEC("tp_btf/block_bio_queue")
int BPF_PROG(md_btf_queue_q, void *q, struct bio *bio) { return queued(bio); }
SEC("raw_tp/block_bio_queue")
int BPF_PROG(md_raw_queue_q, void *q, struct bio *bio) { return queued(bio); }

char LICENSE[] SEC("license") = "GPL";
