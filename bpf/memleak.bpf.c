// SPDX-License-Identifier: GPL-2.0
/* memleak: outstanding allocations by stack. User mode: uprobes on the
 * allocator's entry points (attached by the front end, by name, in the
 * target's libc); kernel mode: the kmem (and percpu) tracepoints.
 * Allocations are kept by address until freed; the totals per stack are
 * kept up to date in the kernel. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "memleak.h"
#include "maps.bpf.h"
#include "events.bpf.h"
#include "errors.bpf.h"

#define ENOMEM 12
#define MAP_FAILED ((__u64)-1)

const volatile __u64 min_size = 0;
const volatile __u64 max_size = (__u64)-1;
const volatile __u64 sample_every = 1;
const volatile __u64 page_size = 4096;
const volatile bool trace_all = false;
const volatile bool wa_missing_free = false;
const volatile bool user_stacks = true;

/* The size asked for, from an allocator's entry to its return. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} sizes SEC(".maps");

/* posix_memalign's result pointer, from entry to return. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} memptrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1000000);
	__type(key, struct alloc_key);
	__type(value, struct alloc_info);
} allocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct combined_key);
	__type(value, struct combined);
} combined SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 10240);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MAX_STACK_DEPTH * sizeof(__u64));
} stack_traces SEC(".maps");

/* Makes libbpf-cargo generate the Rust types of the -t events and of the
 * error enum. */
struct mem_event mem_event_layout = {};
enum memleak_error memleak_error_btf;

/* -t: one line per call, through the shared batched ring buffer. */
static __always_inline void trace_call(__u64 addr, __u64 size, bool alloc)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct mem_event e = {};

	e.ts_ns = bpf_ktime_get_ns();
	e.addr = addr;
	e.size = size;
	e.pid = id >> 32;
	e.tid = (__u32)id;
	e.alloc = alloc;
	emit(&e, sizeof(e));
}

static __always_inline void combined_add(__s32 stack_id, __u32 tgid, __u64 size)
{
	static const struct combined none;
	struct combined_key key = { .stack_id = stack_id, .tgid = tgid };
	struct combined *c = lookup_or_try_init(&combined, &key, &none);

	if (!c) {
		count_error(ERR_COMBINED_FULL);
		return;
	}
	__sync_fetch_and_add(&c->bytes, size);
	__sync_fetch_and_add(&c->count, 1);
}

static __always_inline void combined_sub(__s32 stack_id, __u32 tgid, __u64 size)
{
	struct combined_key key = { .stack_id = stack_id, .tgid = tgid };
	struct combined *c = bpf_map_lookup_elem(&combined, &key);

	if (!c)
		return;
	__sync_fetch_and_sub(&c->bytes, size);
	__sync_fetch_and_sub(&c->count, 1);
}

/* The process an allocation belongs to: kernel ones belong to the kernel,
 * whichever task made or freed them. */
static __always_inline __u32 owner(void)
{
	return user_stacks ? bpf_get_current_pid_tgid() >> 32 : 0;
}

static __always_inline void on_free(__u64 addr)
{
	struct alloc_key key = { .addr = addr, .tgid = owner() };
	struct alloc_info *info = bpf_map_lookup_elem(&allocs, &key);

	if (!info)
		return;
	combined_sub(info->stack_id, info->tgid, info->size);
	bpf_map_delete_elem(&allocs, &key);
	if (trace_all)
		trace_call(addr, 0, false);
}

static __always_inline bool wanted_size(__u64 size)
{
	if (size < min_size || size > max_size)
		return false;
	/* -s N: one allocation in N, at random. */
	return sample_every <= 1 || bpf_get_prandom_u32() % sample_every == 0;
}

/* Records an allocation of `size` at `addr`, with the stack that made it. */
static __always_inline void on_alloc(void *ctx, __u64 addr, __u64 size)
{
	struct alloc_key key = { .addr = addr, .tgid = owner() };
	struct alloc_info info = {};
	long id;

	if (!addr || addr == MAP_FAILED)
		return;
	/* An address handed out again was freed where we could not see it. */
	if (wa_missing_free)
		on_free(addr);
	id = bpf_get_stackid(ctx, &stack_traces, user_stacks ? BPF_F_USER_STACK : 0);
	if (id < 0)
		count_error(id == -EEXIST ? ERR_STACK_COLLISION :
			    id == -ENOMEM ? ERR_STACK_FULL : ERR_STACK_OTHER);
	info.size = size;
	info.ts_ns = bpf_ktime_get_ns();
	info.stack_id = id;
	info.tgid = key.tgid;
	if (bpf_map_update_elem(&allocs, &key, &info, BPF_ANY)) {
		count_error(ERR_ALLOCS_FULL);
		return;
	}
	combined_add(id, info.tgid, size);
	if (trace_all)
		trace_call(addr, size, true);
}

/* User mode. The stack is taken in the return probe: there the
 * instruction pointer is back in the caller, whose frame is complete, so
 * the frame pointer walk starts at the function that called the
 * allocator. (From an entry probe the walk skips that very function: the
 * allocator has not pushed a frame yet.) */
static __always_inline void enter(__u64 size)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (wanted_size(size))
		bpf_map_update_elem(&sizes, &tid, &size, BPF_ANY);
}

static __always_inline void leave(void *ctx, __u64 addr)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *size = bpf_map_lookup_elem(&sizes, &tid);
	__u64 n;

	if (!size)
		return;
	n = *size;
	bpf_map_delete_elem(&sizes, &tid);
	on_alloc(ctx, addr, n);
}

SEC("uprobe")
int BPF_UPROBE(malloc_enter, size_t size)
{
	enter(size);
	return 0;
}

SEC("uretprobe")
int BPF_URETPROBE(malloc_exit, void *ret)
{
	leave(ctx, (__u64)ret);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(calloc_enter, size_t nmemb, size_t size)
{
	enter(nmemb * size);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(realloc_enter, void *ptr, size_t size)
{
	on_free((__u64)ptr);
	enter(size);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(reallocarray_enter, void *ptr, size_t nmemb, size_t size)
{
	on_free((__u64)ptr);
	enter(nmemb * size);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(posix_memalign_enter, void **memptr, size_t alignment, size_t size)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 p = (__u64)memptr;

	bpf_map_update_elem(&memptrs, &tid, &p, BPF_ANY);
	enter(size);
	return 0;
}

SEC("uretprobe")
int BPF_URETPROBE(posix_memalign_exit, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *memptr = bpf_map_lookup_elem(&memptrs, &tid);
	__u64 addr = 0;

	if (!memptr)
		return 0;
	if (ret == 0)
		bpf_probe_read_user(&addr, sizeof(addr), (void *)*memptr);
	bpf_map_delete_elem(&memptrs, &tid);
	leave(ctx, addr);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(aligned_alloc_enter, size_t alignment, size_t size)
{
	enter(size);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(valloc_enter, size_t size)
{
	enter(size);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(memalign_enter, size_t alignment, size_t size)
{
	enter(size);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(pvalloc_enter, size_t size)
{
	enter((size + page_size - 1) & ~(page_size - 1));
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(mmap_enter, void *addr, size_t length)
{
	enter(length);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(munmap_enter, void *addr)
{
	on_free((__u64)addr);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(mremap_enter, void *old_address, size_t old_size, size_t new_size)
{
	on_free((__u64)old_address);
	enter(new_size);
	return 0;
}

SEC("uprobe")
int BPF_UPROBE(free_enter, void *ptr)
{
	on_free((__u64)ptr);
	return 0;
}

/* Kernel mode: the tracepoints carry both size and address. */
static __always_inline void kernel_alloc(void *ctx, __u64 addr, __u64 size)
{
	if (wanted_size(size))
		on_alloc(ctx, addr, size);
}

SEC("tracepoint/kmem/kmalloc")
int ml_kmalloc(struct trace_event_raw_kmalloc *ctx)
{
	kernel_alloc(ctx, (__u64)ctx->ptr, ctx->bytes_alloc);
	return 0;
}

SEC("tracepoint/kmem/kfree")
int ml_kfree(struct trace_event_raw_kfree *ctx)
{
	on_free((__u64)ctx->ptr);
	return 0;
}

SEC("tracepoint/kmem/kmem_cache_alloc")
int ml_cache_alloc(struct trace_event_raw_kmem_cache_alloc *ctx)
{
	kernel_alloc(ctx, (__u64)ctx->ptr, ctx->bytes_alloc);
	return 0;
}

SEC("tracepoint/kmem/kmem_cache_free")
int ml_cache_free(struct trace_event_raw_kmem_cache_free *ctx)
{
	on_free((__u64)ctx->ptr);
	return 0;
}

SEC("tracepoint/kmem/mm_page_alloc")
int ml_page_alloc(struct trace_event_raw_mm_page_alloc *ctx)
{
	kernel_alloc(ctx, ctx->pfn, page_size << ctx->order);
	return 0;
}

SEC("tracepoint/kmem/mm_page_free")
int ml_page_free(struct trace_event_raw_mm_page_free *ctx)
{
	on_free(ctx->pfn);
	return 0;
}

SEC("tracepoint/percpu/percpu_alloc_percpu")
int ml_percpu_alloc(struct trace_event_raw_percpu_alloc_percpu *ctx)
{
	kernel_alloc(ctx, (__u64)ctx->ptr, ctx->bytes_alloc);
	return 0;
}

SEC("tracepoint/percpu/percpu_free_percpu")
int ml_percpu_free(struct trace_event_raw_percpu_free_percpu *ctx)
{
	on_free((__u64)ctx->ptr);
	return 0;
}

enum stack_limits stack_limits_btf;

char LICENSE[] SEC("license") = "GPL";
