// SPDX-License-Identifier: GPL-2.0
/* syncsnoop: sync(), syncfs(), fsync(), fdatasync(), msync() and
 * sync_file_range(), each at its return with its latency, its result and
 * the file it synced (the descriptor's, or msync's mapping's).
 *
 * The calls' own tracepoints where the kernel has them: they run for these
 * calls only, where one program on sys_enter and sys_exit would run for
 * every system call of the machine (syncs are rare; a long-running snoop
 * should cost the rest nothing). Else tp_btf sys_enter/sys_exit, testing
 * the call's number first. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "syncsnoop.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"
#include "callset.bpf.h"
#include "files.bpf.h"
#include "paths.bpf.h"

const volatile bool failed_only = false;
const volatile __u64 min_latency_ns = 0;
CALL_SET(SYNC_CALLS)

struct event event_layout = {};
enum sync_call sync_call_btf;

struct start {
	__u64 ts;
	__u64 args[3];
	__u32 call;
	__u32 pad;
};

/* By thread; LRU: a thread that dies inside a call leaves its entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct start);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct event);
} scratch SEC(".maps");

static __always_inline void entered(__u32 call, __u64 a0, __u64 a1, __u64 a2)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct start s = { .call = call, .args = { a0, a1, a2 } };

	if (!task_allowed(id) || !cgroup_allowed())
		return;
	s.ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&starts, &tid, &s, BPF_ANY);
}

struct vma_file {
	struct file *file;
};

static long mapping_file(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	((struct vma_file *)data)->file = BPF_CORE_READ(vma, vm_file);
	return 0;
}

/* The file `call` names: its descriptor's, or (with `vma`: programs
 * loaded only where the kernel has bpf_find_vma, 5.17+, as a kernel
 * before refuses a program that names a callback even in dead code) the
 * file mapped where `arg` is. */
static __always_inline struct file *call_file(__u32 call, __u64 arg, bool vma)
{
	struct vma_file found = {};

	switch (call) {
	case SYNC_SYNCFS:
	case SYNC_FSYNC:
	case SYNC_FDATASYNC:
	case SYNC_FILE_RANGE:
		return fd_file((long)(int)arg);
	case SYNC_MSYNC:
		if (vma)
			bpf_find_vma(bpf_get_current_task_btf(), arg, mapping_file, &found, 0);
		return found.file;
	}
	return 0;
}

/* Finds the file of the call the scratch record holds, walks its path
 * into the record and sends it. */
static __always_inline int walk_and_send(bool vma)
{
	__u32 zero = 0, size = 0;
	struct event *e = bpf_map_lookup_elem(&scratch, &zero);
	struct file *f;

	if (!e)
		return 0;
	f = call_file(e->call, e->args[0], vma);
	e->has_file = f != 0;
	if (f)
		size = walk_path(e->buf, 0, BPF_CORE_READ(f, f_path.dentry),
				 BPF_CORE_READ(f, f_path.mnt), &e->depth, &e->truncated);
	e->size = size;
	/* Bounded for the verifier in a register of its own: the field, read
	 * back, would not be. */
	if (size <= WALK_BUF_SIZE)
		emit(e, __builtin_offsetof(struct event, buf) + size);
	return 0;
}

/* The walk, verified once for the six exit tracepoints' programs, which
 * reach it by tail call (a program of their type). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} walker SEC(".maps");

SEC("tracepoint")
int sync_walk(void *ctx)
{
	return walk_and_send(false);
}

SEC("tracepoint")
int sync_walk_vma(void *ctx)
{
	return walk_and_send(true);
}

/* A call returns: its record, sent with its file's path (walked inline,
 * or by the walker). */
static __always_inline void exited(void *ctx, long ret, bool walk_inline, bool vma)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	struct start *found, s;
	struct event *e;

	found = bpf_map_lookup_elem(&starts, &tid);
	if (!found)
		return;
	s = *found;
	bpf_map_delete_elem(&starts, &tid);
	if ((failed_only && ret >= 0) || now - s.ts < min_latency_ns)
		return;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return;
	task_header_now(&e->task);
	e->task.ts_ns = now;
	e->latency_ns = now - s.ts;
	e->args[0] = s.args[0];
	e->args[1] = s.args[1];
	e->args[2] = s.args[2];
	e->ret = ret;
	e->call = s.call;
	e->depth = 0;
	e->truncated = 0;
	e->has_file = 0;
	e->size = 0;
	if (s.call != SYNC_SYNC) {
		if (walk_inline) {
			walk_and_send(vma);
			return;
		}
		bpf_tail_call(ctx, &walker, 0);
	}
	/* sync(), or the tail call failed: no file. */
	emit(e, __builtin_offsetof(struct event, buf));
}

/* The calls' own tracepoints, the walk by tail call; where they are
 * missing, tp_btf at every call, the walk inline. */
#define EXITED(ctx, ret) exited(ctx, ret, false, false)
#define SYNC_CALL(name, call, nargs)                                               \
	CALL_ENTRY(sync, name, call, nargs, entered)                               \
	CALL_EXIT(sync, name, EXITED)

SYNC_CALL(sync, SYNC_SYNC, 0)
SYNC_CALL(syncfs, SYNC_SYNCFS, 1)
SYNC_CALL(fsync, SYNC_FSYNC, 1)
SYNC_CALL(fdatasync, SYNC_FDATASYNC, 1)
SYNC_CALL(msync, SYNC_MSYNC, 3)
SYNC_CALL(sync_file_range, SYNC_FILE_RANGE, 3)
CALL_SET_BTF_ENTRY(sync_btf_enter, entered)
#define EXITED_INLINE(ctx, ret) exited(ctx, ret, true, false)
#define EXITED_INLINE_VMA(ctx, ret) exited(ctx, ret, true, true)
CALL_SET_BTF_EXIT(sync_btf_exit, EXITED_INLINE)
CALL_SET_BTF_EXIT(sync_btf_exit_vma, EXITED_INLINE_VMA)

char LICENSE[] SEC("license") = "GPL";
