/* Histogram slots, computed in the kernel.
 *
 * log2: slot i holds [2^i, 2^(i+1)), with 0 and 1 both in slot 0, the
 * layout BCC prints. fine (log-linear): each power of two split into
 * FINE_SUBS equal sub-buckets, below FINE_SUBS exact; relative error under
 * 1/FINE_SUBS, what --percentiles reads. common::output::hist mirrors both. */
#ifndef __BITS_BPF_H
#define __BITS_BPF_H

#include "hist.h"

static __always_inline __u32 log2_u32(__u32 v)
{
	__u32 r, shift;

	r = (v > 0xFFFF) << 4; v >>= r;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 hi = v >> 32;

	return hi ? log2_u32(hi) + 32 : log2_u32(v);
}

/* 64-bit slots and barrier_var: the verifier must see the clamp on the
 * register that indexes the array, not on a re-extended copy of it. */
static __always_inline __u64 log2_slot(__u64 v)
{
	__u64 slot = log2_u64(v);

	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	barrier_var(slot);
	return slot;
}

static __always_inline __u64 fine_slot(__u64 v)
{
	__u64 p, slot;

	/* Both paths reach the clamp: the compiler may otherwise test the
	 * small case on a register the verifier cannot tie to the index. */
	if (v < FINE_SUBS) {
		slot = v;
	} else {
		p = log2_u64(v);
		slot = (p - FINE_SUB_BITS + 1) * FINE_SUBS +
		       ((v >> (p - FINE_SUB_BITS)) & (FINE_SUBS - 1));
	}
	if (slot >= FINE_SLOTS)
		slot = FINE_SLOTS - 1;
	barrier_var(slot);
	return slot;
}

/* Adds one value to a histogram (and its fine twin, when there is one). */
/* A histogram tool's maps: its log2 histograms by key (`hists`), the fine
 * ones --percentiles fills (`fine_hists`), and their zero values for
 * lookup_or_try_init. Read and drained by the histogram kind's tools. */
#define HIST_MAPS(key_type, hist_type, entries)			\
	struct {						\
		__uint(type, BPF_MAP_TYPE_HASH);		\
		__uint(max_entries, entries);			\
		__type(key, key_type);				\
		__type(value, hist_type);			\
	} hists SEC(".maps");					\
	struct {						\
		__uint(type, BPF_MAP_TYPE_HASH);		\
		__uint(max_entries, entries);			\
		__type(key, key_type);				\
		__type(value, struct fine_hist);		\
	} fine_hists SEC(".maps");				\
	static hist_type zero_hist;				\
	static struct fine_hist zero_fine

/* A value's slot, fine slot and count, `n` times over, without its total. */
static __always_inline void hist_count_n(struct hist *h, struct fine_hist *fine, __u64 v,
					 __u32 n)
{
	__u64 slot = log2_slot(v);

	if (slot < MAX_SLOTS)
		__sync_fetch_and_add(&h->slots[slot], n);
	__sync_fetch_and_add(&h->count, n);
	if (!fine)
		return;
	slot = fine_slot(v);
	if (slot < FINE_SLOTS)
		__sync_fetch_and_add(&fine->slots[slot], n);
}

static __always_inline void hist_count(struct hist *h, struct fine_hist *fine, __u64 v)
{
	hist_count_n(h, fine, v, 1);
}

static __always_inline void hist_add(struct hist *h, struct fine_hist *fine, __u64 v)
{
	hist_count(h, fine, v);
	__sync_fetch_and_add(&h->total, v);
}

/* As hist_add for `n` values of `v` (the pages of one folio). */
static __always_inline void hist_add_n(struct hist *h, struct fine_hist *fine, __u64 v, __u32 n)
{
	hist_count_n(h, fine, v, n);
	__sync_fetch_and_add(&h->total, v * n);
}

/* As hist_add for `v` measured finer than the slots (ns for µs slots):
 * the slots take v / div, the total v itself, so that a sum of many short
 * values loses nothing to truncation (the front end divides it). */
static __always_inline void hist_add_exact_total(struct hist *h, struct fine_hist *fine, __u64 v,
						 __u64 div)
{
	hist_count(h, fine, v / div);
	__sync_fetch_and_add(&h->total, v);
}

#endif
