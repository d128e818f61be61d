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
#include "ustack.bpf.h"
#include "errors.bpf.h"
#include "stacks.bpf.h"

#define MAP_FAILED ((__u64)-1)

const volatile __u64 min_size = 0;
const volatile __u64 max_size = (__u64)-1;
const volatile __u64 sample_every = 1;
const volatile __u64 page_size = 4096;
const volatile bool trace_all = false;
const volatile bool wa_missing_free = false;
const volatile bool user_stacks = true;

/* A followed call, from its entry to its return, by thread: the size
 * asked for, the stack pointer at the entry (which tells this call's return
 * from a nested call's), and posix_memalign's result pointer. */
/* How far below its caller's entry a nested allocator call's stack can be. */
#define NESTED_MAX (64 * 1024)

struct pending {
	__u64 size;
	__u64 sp;
	__u64 memptr;
	/* --unwind dwarf: the entry's stack copy. */
	__u64 seq;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct pending);
} pending SEC(".maps");

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

STACK_MAP(stack_traces);

/* Makes libbpf-cargo generate the Rust types of the -t events and of the
 * error enum. */
struct mem_event mem_event_layout = {};
enum memleak_error memleak_error_btf;
enum alloc_fn alloc_fn_btf;

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
	if (!dwarf_unwind)
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

/* Records an allocation of `size` at `addr`, with the stack that made it:
 * taken here, or (--unwind dwarf) the copy `seq` sent at the entry. */
static __always_inline void on_alloc(void *ctx, __u64 addr, __u64 size, __u64 seq)
{
	struct alloc_key key = { .addr = addr, .tgid = owner() };
	struct alloc_info info = {};
	long id = -1;

	if (!addr || addr == MAP_FAILED)
		return;
	/* An address handed out again was freed where we could not see it. */
	if (wa_missing_free)
		on_free(addr);
	if (!dwarf_unwind) {
		id = stack_id(ctx, &stack_traces, user_stacks ? BPF_F_USER_STACK : 0);
	}
	info.size = size;
	info.ts_ns = bpf_ktime_get_ns();
	info.stack_id = id;
	info.tgid = key.tgid;
	info.seq = seq;
	if (bpf_map_update_elem(&allocs, &key, &info, BPF_ANY)) {
		count_error(ERR_ALLOCS_FULL);
		return;
	}
	/* With copies, each allocation has its own: the front end sums. */
	if (!dwarf_unwind)
		combined_add(id, info.tgid, size);
	if (trace_all)
		trace_call(addr, size, true);
}

/* User mode. Three ways to attach, the best the kernel offers: a session
 * uprobe_multi link (6.13+), whose entry program skips the return probe of
 * a call it does not follow; uprobe_multi entry and return links (6.6+);
 * one perf uprobe per function and return. The work is the same in each,
 * told apart by the function (the probe's cookie, or the program).
 *
 * The stack is taken at the return: there the instruction pointer is back
 * in the caller, whose frame is complete, so the frame pointer walk starts
 * at the function that called the allocator. (From an entry probe the walk
 * skips that very function: the allocator has not pushed a frame yet.) */

/* Follows a call to its return, unless it is made inside another followed
 * call of the same thread (realloc(NULL, n) calls malloc, reallocarray
 * calls realloc, a large malloc calls mmap): the block is counted once, as
 * the outer call, whose caller asked for it. Deeper calls have lower stack
 * pointers; a tail call reuses its caller's frame and replaces it. */
static __always_inline bool follow(struct pt_regs *ctx, __u64 size, __u64 memptr)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending *outer = bpf_map_lookup_elem(&pending, &tid);
	struct pending p = { .size = size, .sp = PT_REGS_SP(ctx), .memptr = memptr };

	/* The outer call's frame is near: a pending call far above is not
	 * this one's caller (its return was never seen: a thread that exited
	 * inside the allocator, and a new one with its id). */
	if (outer && outer->sp > p.sp && outer->sp - p.sp < NESTED_MAX)
		return false;
	/* At the entry the caller's frame is whole and the registers are the
	 * caller's but for the pushed return address: the copy's unwind
	 * starts in the allocator and finds its caller by the tables. */
	if (dwarf_unwind)
		p.seq = ustack_send(PT_REGS_IP(ctx), PT_REGS_SP(ctx), PT_REGS_FP(ctx));
	return bpf_map_update_elem(&pending, &tid, &p, BPF_ANY) == 0;
}

/* At a function's entry: frees what it frees, and returns true if the
 * call is followed to its return (it is not sampled out, its size is
 * wanted, it is not nested in another followed call). */
static __always_inline bool enter(struct pt_regs *ctx, __u32 fn)
{
	__u64 a1 = PT_REGS_PARM1(ctx), a2 = PT_REGS_PARM2(ctx), a3 = PT_REGS_PARM3(ctx);
	__u64 size;

	switch (fn) {
	case FN_MALLOC:
	case FN_VALLOC:
		size = a1;
		break;
	case FN_CALLOC:
		size = a1 * a2;
		break;
	case FN_REALLOC:
		on_free(a1);
		size = a2;
		break;
	case FN_REALLOCARRAY:
		on_free(a1);
		size = a2 * a3;
		break;
	case FN_POSIX_MEMALIGN:
		size = a3;
		break;
	case FN_ALIGNED_ALLOC:
	case FN_MEMALIGN:
	case FN_MMAP:
		size = a2;
		break;
	case FN_PVALLOC:
		size = (a1 + page_size - 1) & ~(page_size - 1);
		break;
	case FN_MREMAP:
		on_free(a1);
		size = a3;
		break;
	default: /* free, munmap */
		on_free(a1);
		return false;
	}
	if (!wanted_size(size))
		return false;
	/* posix_memalign hands the block back through its first argument. */
	return follow(ctx, size, fn == FN_POSIX_MEMALIGN ? a1 : 0);
}

/* At a return: the block the followed call handed out. */
static __always_inline void leave(struct pt_regs *ctx, __u32 fn)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending *p = bpf_map_lookup_elem(&pending, &tid);
	__u64 addr = PT_REGS_RC(ctx), size, memptr, seq;

	/* This call's own return pops only its return address (x86); a
	 * nested call's return is deeper. */
#if defined(__TARGET_ARCH_x86)
	if (!p || p->sp + 8 != PT_REGS_SP(ctx))
		return;
#else
	if (!p || p->sp != PT_REGS_SP(ctx))
		return;
#endif
	size = p->size;
	memptr = p->memptr;
	seq = p->seq;
	bpf_map_delete_elem(&pending, &tid);
	if (fn == FN_POSIX_MEMALIGN) {
		if ((int)addr != 0)
			return;
		addr = 0;
		bpf_probe_read_user(&addr, sizeof(addr), (void *)memptr);
	}
	on_alloc(ctx, addr, size, seq);
}

extern bool bpf_session_is_return(void) __ksym __weak;

/* One program for every followed function, entry and return. Returning 1
 * at the entry skips the return probe: a call not followed costs one trap. */
SEC("uprobe.session")
int um_session(struct pt_regs *ctx)
{
	__u32 fn = bpf_get_attach_cookie(ctx);

	if (bpf_session_is_return()) {
		leave(ctx, fn);
		return 0;
	}
	return enter(ctx, fn) ? 0 : 1;
}

SEC("uprobe.multi")
int um_enter(struct pt_regs *ctx)
{
	enter(ctx, bpf_get_attach_cookie(ctx));
	return 0;
}

SEC("uretprobe.multi")
int um_exit(struct pt_regs *ctx)
{
	leave(ctx, bpf_get_attach_cookie(ctx));
	return 0;
}

/* One perf uprobe per function (no cookies before 5.15): a program each. */
#define ENTRY_PROGRAM(name, fn)			\
	SEC("uprobe")					\
	int name##_enter(struct pt_regs *ctx)		\
	{						\
		enter(ctx, fn);				\
		return 0;				\
	}

ENTRY_PROGRAM(malloc, FN_MALLOC)
ENTRY_PROGRAM(calloc, FN_CALLOC)
ENTRY_PROGRAM(realloc, FN_REALLOC)
ENTRY_PROGRAM(reallocarray, FN_REALLOCARRAY)
ENTRY_PROGRAM(posix_memalign, FN_POSIX_MEMALIGN)
ENTRY_PROGRAM(aligned_alloc, FN_ALIGNED_ALLOC)
ENTRY_PROGRAM(valloc, FN_VALLOC)
ENTRY_PROGRAM(memalign, FN_MEMALIGN)
ENTRY_PROGRAM(pvalloc, FN_PVALLOC)
ENTRY_PROGRAM(mmap, FN_MMAP)
ENTRY_PROGRAM(mremap, FN_MREMAP)
ENTRY_PROGRAM(munmap, FN_MUNMAP)
ENTRY_PROGRAM(free, FN_FREE)

/* Every function but posix_memalign returns the block. */
SEC("uretprobe")
int malloc_exit(struct pt_regs *ctx)
{
	leave(ctx, FN_MALLOC);
	return 0;
}

SEC("uretprobe")
int posix_memalign_exit(struct pt_regs *ctx)
{
	leave(ctx, FN_POSIX_MEMALIGN);
	return 0;
}

/* Kernel mode: the tracepoints carry both size and address. */
static __always_inline void kernel_alloc(void *ctx, __u64 addr, __u64 size)
{
	if (wanted_size(size))
		on_alloc(ctx, addr, size, 0);
}

/* Before 6.1 kmalloc and kmem_cache_alloc shared one event layout, and
 * kfree and kmem_cache_free another (5.10 has no trace_event_raw_kmalloc):
 * the layout the kernel has is read, the other branch dropped at load. */
struct trace_event_raw_kmem_alloc___old {
	const void *ptr;
	size_t bytes_alloc;
} __attribute__((preserve_access_index));

struct trace_event_raw_kmem_free___old {
	const void *ptr;
} __attribute__((preserve_access_index));

/* The fields are read, not loaded from the context: the compiler may merge
 * the two branches into one context access at a variable offset, which the
 * verifier refuses. */
#define KMEM_ALLOC(ctx, type)                                                          \
	do {                                                                           \
		struct trace_event_raw_kmem_alloc___old *old = (ctx);                  \
		struct type *new = (ctx);                                              \
		if (bpf_core_type_exists(struct type))                                 \
			kernel_alloc(ctx, (__u64)BPF_CORE_READ(new, ptr),              \
				     BPF_CORE_READ(new, bytes_alloc));                 \
		else                                                                   \
			kernel_alloc(ctx, (__u64)BPF_CORE_READ(old, ptr),              \
				     BPF_CORE_READ(old, bytes_alloc));                 \
	} while (0)

#define KMEM_FREE(ctx, type)                                                           \
	do {                                                                           \
		struct trace_event_raw_kmem_free___old *old = (ctx);                   \
		struct type *new = (ctx);                                              \
		if (bpf_core_type_exists(struct type))                                 \
			on_free((__u64)BPF_CORE_READ(new, ptr));                       \
		else                                                                   \
			on_free((__u64)BPF_CORE_READ(old, ptr));                       \
	} while (0)

SEC("tracepoint/kmem/kmalloc")
int ml_kmalloc(void *ctx)
{
	KMEM_ALLOC(ctx, trace_event_raw_kmalloc);
	return 0;
}

SEC("tracepoint/kmem/kfree")
int ml_kfree(void *ctx)
{
	KMEM_FREE(ctx, trace_event_raw_kfree);
	return 0;
}

SEC("tracepoint/kmem/kmem_cache_alloc")
int ml_cache_alloc(void *ctx)
{
	KMEM_ALLOC(ctx, trace_event_raw_kmem_cache_alloc);
	return 0;
}

SEC("tracepoint/kmem/kmem_cache_free")
int ml_cache_free(void *ctx)
{
	KMEM_FREE(ctx, trace_event_raw_kmem_cache_free);
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
	/* bytes_alloc came in 5.19; before, the requested size. Read, not
	 * loaded from the context (see KMEM_ALLOC). */
	if (bpf_core_field_exists(ctx->bytes_alloc))
		kernel_alloc(ctx, (__u64)ctx->ptr, BPF_CORE_READ(ctx, bytes_alloc));
	else
		kernel_alloc(ctx, (__u64)ctx->ptr, BPF_CORE_READ(ctx, size));
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
