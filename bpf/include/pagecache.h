/* Shared by pagecache.bpf.h and common::kernel::pagecache (the counters
 * cachestat and cachetop keep, the indexes they are kept at). */
#ifndef __PAGECACHE_H
#define __PAGECACHE_H

/* The counters, all in pages except where noted. */
enum cache_counter {
	/* Page accesses: read and fault page ranges (tracepoint mode), or
	 * folio_mark_accessed() calls (fentry mode). */
	CNT_ACCESSED,
	/* Pages added to the page cache. */
	CNT_ADDED,
	/* Of those, pages a write added (dirtied at once by the same task):
	 * not read misses. */
	CNT_WRITE_ADDED,
	/* Pages dirtied. */
	CNT_DIRTIED,
	/* mark_buffer_dirty() calls (fentry mode). */
	CNT_BUFFER_DIRTIED,
	CNT_MAX,
};

#endif
