/* Per-event output: one ring buffer named `events`, a per-CPU count of the
 * records it refused, and a wakeup policy that batches.
 *
 * Waking the reader for every record is what makes libbpf-tools' opensnoop
 * slow a tight open() loop several times over. We wake it at most once per
 * WAKEUP_NS, or when a quarter of the ring is full; the reader also polls
 * with a short timeout, so a record never waits longer than that. */
#ifndef __EVENTS_BPF_H
#define __EVENTS_BPF_H

#ifndef RINGBUF_BYTES
#define RINGBUF_BYTES (1 << 20)
#endif
#define WAKEUP_NS (10 * 1000 * 1000ULL)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RINGBUF_BYTES);
} events SEC(".maps");

/* Read and reported by common::run::lifecycle (lost events); never reset. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} lost_events SEC(".maps");

static __u64 last_wakeup_ns;

static __always_inline void count_lost(void)
{
	__u32 zero = 0;
	__u64 *lost = bpf_map_lookup_elem(&lost_events, &zero);

	if (lost)
		*lost += 1;
}

static __always_inline __u64 wakeup_flag(void)
{
	__u64 now = bpf_ktime_get_ns();

	/* Racy across CPUs on purpose: a lost update only costs one extra wakeup. */
	if (now - last_wakeup_ns >= WAKEUP_NS ||
	    bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= RINGBUF_BYTES / 4) {
		last_wakeup_ns = now;
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

/* Copy `size` bytes of `data` into the ring, counting a full ring as lost. */
static __always_inline void emit(void *data, __u64 size)
{
	if (bpf_ringbuf_output(&events, data, size, wakeup_flag()))
		count_lost();
}

#endif
