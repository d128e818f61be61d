// SPDX-License-Identifier: GPL-2.0
/* The page cache's accesses, additions (misses) and dirtied pages, as
 * cachestat and cachetop count them. fentry mode hooks the functions BCC
 * hooks, in their folio form (or, before 5.16, their page form); kprobe
 * mode the same where fentry is missing; tracepoint mode (tp_btf, or
 * raw_tp) counts accesses from the page ranges the filemap tracepoints
 * report. The front end loads one mode (common::kernel::pagecache).
 *
 * The including tool defines, before this header, where a count goes:
 *   static __always_inline void count(__u32 counter, __u64 n);
 * (counter: enum cache_counter, pagecache.h), called in the context of the
 * task the page cache work is done for. */
#ifndef __PAGECACHE_BPF_H
#define __PAGECACHE_BPF_H

#include "pagecache.h"
#include "filters.bpf.h"

/* log2 of the page size, set by the front end. */
const volatile __u32 page_shift = 12;

/* The folio each task added last: a write adds a folio and dirties it
 * right after, which tells its additions from read misses. */
struct added {
	__u64 folio;
	__u64 pages;
};

/* tp_btf and fentry programs keep per-task state in task storage (no
 * hashing on the read path); raw_tp programs, in LRU hashes by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct added);
} last_added SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct added);
} last_added_storage SEC(".maps");

/* Where each task's current read is: filemap_get_pages reports the whole
 * remaining range of a read on every batch, so later batches of the same
 * read must not count it again. */
struct read_pos {
	__u64 mapping;
	__u64 index;
	__u64 last;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct read_pos);
} reads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct read_pos);
} reads_storage SEC(".maps");

/* Before 6.6 the order had a field of its own. */
struct folio___old {
	unsigned char _folio_order;
} __attribute__((preserve_access_index));

static __always_inline bool traced(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!not_self(tgid) || !cgroup_allowed())
		return false;
	return !filter_pids || bpf_map_lookup_elem(&pid_filter, &tgid);
}

/* folio_nr_pages(): 1 unless PG_head is set, else 1 << order. The flags
 * word is first in struct folio under every name it has had. */
static __always_inline __u64 folio_pages(const struct folio *f)
{
	unsigned long flags = 0, order = 0;

	bpf_probe_read_kernel(&flags, sizeof(flags), f);
	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(f->_flags_1))
		order = BPF_CORE_READ(f, _flags_1) & 0xff;
	else
		order = BPF_CORE_READ((struct folio___old *)f, _folio_order);
	return 1UL << (order & 31);
}

static __always_inline struct added *added_slot(bool btf, bool create)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	static const struct added none;

	if (btf)
		return bpf_task_storage_get(&last_added_storage, bpf_get_current_task_btf(), 0,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	if (create)
		bpf_map_update_elem(&last_added, &tid, &none, BPF_ANY);
	return bpf_map_lookup_elem(&last_added, &tid);
}

/* `pages` pages at `ptr` (a folio, or a page) added to the cache. */
static __always_inline void added_pages(__u64 ptr, __u64 pages, bool btf)
{
	struct added *a;

	count(CNT_ADDED, pages);
	a = added_slot(btf, true);
	if (a) {
		a->folio = ptr;
		a->pages = pages;
	}
}

static __always_inline void dirtied_pages(__u64 ptr, __u64 pages, bool btf)
{
	struct added *a;

	count(CNT_DIRTIED, pages);
	a = added_slot(btf, false);
	if (a && a->folio == ptr) {
		count(CNT_WRITE_ADDED, a->pages);
		a->folio = 0;
	}
}

static __always_inline void on_added(const struct folio *f, bool btf)
{
	if (traced())
		added_pages((__u64)f, folio_pages(f), btf);
}

static __always_inline void on_dirtied(const struct folio *f, bool btf)
{
	if (traced())
		dirtied_pages((__u64)f, folio_pages(f), btf);
}

/* Pages [index, last] of `mapping`, cut at the end of the file. */
static __always_inline __u64 range_pages(const struct address_space *mapping, __u64 index,
					 __u64 last)
{
	__s64 size = BPF_CORE_READ(mapping, host, i_size);
	__u64 eof;

	if (size <= 0)
		return 0;
	eof = ((__u64)size - 1) >> page_shift;
	if (last > eof)
		last = eof;
	return last >= index ? last - index + 1 : 0;
}

static __always_inline void on_read(const struct address_space *mapping, __u64 index, __u64 last,
				    bool btf)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	static const struct read_pos none;
	struct read_pos *pos;

	if (!traced())
		return;
	if (btf) {
		pos = bpf_task_storage_get(&reads_storage, bpf_get_current_task_btf(), 0,
					   BPF_LOCAL_STORAGE_GET_F_CREATE);
	} else {
		pos = bpf_map_lookup_elem(&reads, &tid);
		if (!pos) {
			bpf_map_update_elem(&reads, &tid, &none, BPF_ANY);
			pos = bpf_map_lookup_elem(&reads, &tid);
		}
	}
	if (pos && pos->mapping == (__u64)mapping && pos->last == last && index > pos->index &&
	    index <= last) {
		pos->index = index;
		return;
	}
	count(CNT_ACCESSED, range_pages(mapping, index, last));
	if (pos) {
		pos->mapping = (__u64)mapping;
		pos->index = index;
		pos->last = last;
	}
}

static __always_inline void on_mapped(const struct address_space *mapping, __u64 index, __u64 last)
{
	if (traced())
		count(CNT_ACCESSED, range_pages(mapping, index, last));
}

/* Tracepoint mode, tp_btf. */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(cs_btf_add, struct folio *folio)
{
	on_added(folio, true);
	return 0;
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(cs_btf_dirty, struct folio *folio)
{
	on_dirtied(folio, true);
	return 0;
}

SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(cs_btf_get_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last)
{
	on_read(mapping, index, last, true);
	return 0;
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(cs_btf_map_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last)
{
	on_mapped(mapping, index, last);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(cs_btf_fault, struct address_space *mapping, unsigned long index)
{
	on_mapped(mapping, index, index);
	return 0;
}

/* Tracepoint mode, raw_tp: the same, with untyped arguments. */
SEC("raw_tp/mm_filemap_add_to_page_cache")
int BPF_PROG(cs_raw_add, struct folio *folio)
{
	on_added(folio, false);
	return 0;
}

SEC("raw_tp/writeback_dirty_folio")
int BPF_PROG(cs_raw_dirty, struct folio *folio)
{
	on_dirtied(folio, false);
	return 0;
}

SEC("raw_tp/mm_filemap_get_pages")
int BPF_PROG(cs_raw_get_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last)
{
	on_read(mapping, index, last, false);
	return 0;
}

SEC("raw_tp/mm_filemap_map_pages")
int BPF_PROG(cs_raw_map_pages, struct address_space *mapping, unsigned long index,
	     unsigned long last)
{
	on_mapped(mapping, index, last);
	return 0;
}

SEC("raw_tp/mm_filemap_fault")
int BPF_PROG(cs_raw_fault, struct address_space *mapping, unsigned long index)
{
	on_mapped(mapping, index, index);
	return 0;
}

/* fentry mode: BCC's functions in their folio form. The dirtying
 * function's name varies (folio_account_dirtied is often inlined); the
 * front end sets the target it found. */
SEC("fentry/filemap_add_folio")
int BPF_PROG(cs_fentry_add, struct address_space *mapping, struct folio *folio)
{
	on_added(folio, true);
	return 0;
}

SEC("fentry/folio_mark_accessed")
int BPF_PROG(cs_fentry_accessed, struct folio *folio)
{
	if (traced())
		count(CNT_ACCESSED, 1);
	return 0;
}

SEC("fentry/mark_buffer_dirty")
int BPF_PROG(cs_fentry_buffer_dirty, struct buffer_head *bh)
{
	if (traced())
		count(CNT_BUFFER_DIRTIED, 1);
	return 0;
}

SEC("fentry/folio_account_dirtied")
int BPF_PROG(cs_fentry_dirty, struct folio *folio)
{
	on_dirtied(folio, true);
	return 0;
}

/* Kernels before the folio functions (5.16): the page-based functions BCC
 * hooks, a page per call. Their state is in the hash maps: task storage
 * for tracing programs needs 5.11, bpf_get_current_task_btf too. */
SEC("fentry/add_to_page_cache_lru")
int BPF_PROG(cs_pfentry_add, struct page *page)
{
	if (traced())
		added_pages((__u64)page, 1, false);
	return 0;
}

SEC("fentry/mark_page_accessed")
int BPF_PROG(cs_pfentry_accessed)
{
	if (traced())
		count(CNT_ACCESSED, 1);
	return 0;
}

SEC("fentry/account_page_dirtied")
int BPF_PROG(cs_pfentry_dirty, struct page *page)
{
	if (traced())
		dirtied_pages((__u64)page, 1, false);
	return 0;
}

SEC("fentry/mark_buffer_dirty")
int BPF_PROG(cs_pfentry_buffer_dirty)
{
	if (traced())
		count(CNT_BUFFER_DIRTIED, 1);
	return 0;
}

/* kprobe mode, where fentry is missing: the same functions, folio or page
 * form, attached by the front end to the names it found. */
SEC("kprobe")
int BPF_KPROBE(cs_kprobe_add_folio, void *mapping, const struct folio *folio)
{
	on_added(folio, false);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(cs_kprobe_add_page, struct page *page)
{
	if (traced())
		added_pages((__u64)page, 1, false);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(cs_kprobe_accessed)
{
	if (traced())
		count(CNT_ACCESSED, 1);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(cs_kprobe_buffer_dirty)
{
	if (traced())
		count(CNT_BUFFER_DIRTIED, 1);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(cs_kprobe_dirty_folio, const struct folio *folio)
{
	on_dirtied(folio, false);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(cs_kprobe_dirty_page, struct page *page)
{
	if (traced())
		dirtied_pages((__u64)page, 1, false);
	return 0;
}

/* Keeps the counter enum in BTF for the front end. */
enum cache_counter cache_counter_btf;

#endif
