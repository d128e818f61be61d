// SPDX-License-Identifier: GPL-2.0
/* readahead: pages the kernel read ahead, how many were not used, and the
 * age of those that were at their first use, as BCC's and libbpf-tools'
 * readahead count them.
 *
 * A task is inside read-ahead between the entry and the return of
 * page_cache_ra_unbounded (and of page_cache_ra_order, 6.1+, which
 * allocates large folios itself); each page-cache folio (5.10: page) it
 * allocates there is noted with its time, and its first mark as accessed
 * (folio_mark_accessed; 5.10: mark_page_accessed) is its use. No
 * tracepoint marks read-ahead: fentry/fexit where the kernel allows, else
 * kprobes and kretprobes (the front end attaches them to the functions
 * this kernel has, and loads one of each pair of programs). */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "readahead.h"
#include "bits.bpf.h"
#include "filters.bpf.h"
#include "maps.bpf.h"

const volatile bool millis = false;
const volatile bool fine = false;

HIST_MAPS(__u32, struct ra_hist, 1);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ra_counts);
} counts SEC(".maps");

/* Per thread: its depth in read-ahead, and (kprobes) the order of the folio
 * it is allocating. */
struct ra_state {
	__u32 depth;
	__u32 order;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct ra_state);
} in_ra SEC(".maps");

struct birth {
	__u64 ts;
	__u64 pages;
};

/* Each read-ahead folio not used yet, by its address. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 16);
	__type(key, __u64);
	__type(value, struct birth);
} births SEC(".maps");

static __always_inline struct ra_counts *counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&counts, &zero);
}

static __always_inline void ra_enter(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ra_state zero = {}, *s;

	if (!task_allowed(bpf_get_current_pid_tgid()) || !cgroup_allowed())
		return;
	s = lookup_or_try_init(&in_ra, &tid, &zero);
	if (s)
		s->depth++;
}

static __always_inline void ra_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ra_state *s = bpf_map_lookup_elem(&in_ra, &tid);

	if (!s)
		return;
	if (s->depth > 1)
		s->depth--;
	else
		bpf_map_delete_elem(&in_ra, &tid);
}

/* The task's state where it is inside read-ahead, else none. */
static __always_inline struct ra_state *reading_ahead(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	return bpf_map_lookup_elem(&in_ra, &tid);
}

/* A folio of 2^order pages allocated (null: the allocation failed). */
static __always_inline void allocated(void *folio, __u32 order)
{
	struct birth b = { .ts = bpf_ktime_get_ns() };
	struct ra_counts *c;
	__u64 key = (__u64)folio;

	if (!folio || !reading_ahead())
		return;
	c = counters();
	if (!c)
		return;
	b.pages = 1ULL << (order & 31);
	if (bpf_map_update_elem(&births, &key, &b, BPF_NOEXIST)) {
		__sync_fetch_and_add(&c->dropped, b.pages);
		return;
	}
	__sync_fetch_and_add(&c->total, b.pages);
	__sync_fetch_and_add(&c->unused, b.pages);
}

/* A folio marked accessed: its first use, where it was read ahead. */
static __always_inline void accessed(void *folio)
{
	__u64 key = (__u64)folio;
	struct birth *b = bpf_map_lookup_elem(&births, &key);
	struct fine_hist *fh = 0;
	struct ra_counts *c;
	struct ra_hist *h;
	__u32 zero = 0;
	__u64 age;

	if (!b)
		return;
	age = (bpf_ktime_get_ns() - b->ts) / (millis ? 1000000 : 1000);
	c = counters();
	if (c)
		__sync_fetch_and_add(&c->unused, -(__s64)b->pages);
	h = lookup_or_try_init(&hists, &zero, &zero_hist);
	if (fine)
		fh = lookup_or_try_init(&fine_hists, &zero, &zero_fine);
	/* One count per page of the folio. */
	if (h)
		hist_add_n(&h->hist, fh, age, b->pages);
	bpf_map_delete_elem(&births, &key);
}

/* The read-ahead windows. */
SEC("fentry/page_cache_ra_unbounded")
int BPF_PROG(ra_fentry_unbounded) { ra_enter(); return 0; }
SEC("fexit/page_cache_ra_unbounded")
int BPF_PROG(ra_fexit_unbounded) { ra_exit(); return 0; }
SEC("fentry/page_cache_ra_order")
int BPF_PROG(ra_fentry_order) { ra_enter(); return 0; }
SEC("fexit/page_cache_ra_order")
int BPF_PROG(ra_fexit_order) { ra_exit(); return 0; }

SEC("kprobe")
int BPF_KPROBE(ra_kprobe_window) { ra_enter(); return 0; }
SEC("kretprobe")
int BPF_KRETPROBE(ra_kretprobe_window) { ra_exit(); return 0; }

/* The allocations: a folio of 2^order pages (filemap_alloc_folio, or its
 * _noprof form where memory allocation profiling renamed it, 6.10+), or
 * one page (__page_cache_alloc, before folios). */
SEC("fexit/filemap_alloc_folio")
int BPF_PROG(ra_fexit_folio, gfp_t gfp, unsigned int order, struct folio *ret)
{
	allocated(ret, order);
	return 0;
}

SEC("fexit/filemap_alloc_folio_noprof")
int BPF_PROG(ra_fexit_folio_noprof, gfp_t gfp, unsigned int order, struct folio *ret)
{
	allocated(ret, order);
	return 0;
}

SEC("fexit/__page_cache_alloc")
int BPF_PROG(ra_fexit_page, gfp_t gfp, struct page *ret)
{
	allocated(ret, 0);
	return 0;
}

/* kprobes: the order taken at the entry of a folio allocation, for its
 * return. */
SEC("kprobe")
int BPF_KPROBE(ra_kprobe_folio, gfp_t gfp, unsigned int order)
{
	struct ra_state *s = reading_ahead();

	if (s)
		s->order = order;
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(ra_kretprobe_folio, void *ret)
{
	struct ra_state *s = reading_ahead();

	if (s)
		allocated(ret, s->order);
	return 0;
}

SEC("kretprobe")
int BPF_KRETPROBE(ra_kretprobe_page, void *ret)
{
	allocated(ret, 0);
	return 0;
}

/* The uses. */
SEC("fentry/folio_mark_accessed")
int BPF_PROG(ra_fentry_folio_accessed, struct folio *folio)
{
	accessed(folio);
	return 0;
}

SEC("fentry/mark_page_accessed")
int BPF_PROG(ra_fentry_page_accessed, struct page *page)
{
	accessed(page);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(ra_kprobe_accessed, void *folio)
{
	accessed(folio);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
