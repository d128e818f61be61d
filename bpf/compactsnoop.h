/* Shared by compactsnoop.bpf.c and the compactsnoop front end. */
#ifndef __COMPACTSNOOP_H
#define __COMPACTSNOOP_H

#include "task.h"

enum compact_limits {
	/* The deepest kernel stack -K takes. */
	COMPACT_STACK_DEPTH = 127,
	/* struct event's fragindex where it was not seen. */
	FRAG_UNKNOWN = -1000000,
	/* The zone names' room ("DMA32", "Normal", "Movable"). */
	ZONE_NAME_MAX = 16,
};

/* One compaction of one zone, at its end, in the task that ran it. */
struct event {
	struct task_header task;
	__u64 latency_ns;
	/* The zone's first page frame (mm_compaction_begin's zone_start):
	 * the front end names the node and zone from /proc/zoneinfo. */
	__u64 zone_start;
	/* From the suitability check before it (mm_compaction_suitable):
	 * the node and the zone's name, and with -e the zone's watermarks and
	 * free pages; -1 and empty where the compaction had no such check (the
	 * whole zone, as /proc/sys/vm/compact_memory and proactive compaction
	 * ask). */
	char zone_name[ZONE_NAME_MAX];
	__s32 nid;
	__s32 order;
	/* enum compact_result. */
	__s32 status;
	__u64 min;
	__u64 low;
	__u64 high;
	__u64 free;
	/* fragmentation_index() * 1000 (a kretprobe, -e, where kprobes are);
	 * FRAG_UNKNOWN where not seen. */
	__s32 fragindex;
	__u32 sync;
	__u32 kstack_frames;
	__u32 pad;
	__u64 kstack[COMPACT_STACK_DEPTH];
};

#endif
