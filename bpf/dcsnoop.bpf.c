// SPDX-License-Identifier: GPL-2.0
/* dcsnoop: each dentry cache lookup that failed (d_lookup returning no
 * dentry), and with -a each path component looked up (lookup_fast), with
 * the task and the name, as BCC's dcsnoop traces them, and the misses BCC
 * no longer sees since 4.7.
 *
 * A failed lookup is a name the cache did not have (dcache.bpf.h): a
 * d_lookup that found nothing, or a d_alloc_parallel that is not the
 * second half of the same miss.
 *
 * No tracepoint covers the dentry cache: fentry and fexit where the kernel
 * allows, else kprobes and a kretprobe (lookup_fast's attached by the front
 * end, which finds it under a compiler's suffix where it has one). The
 * front end loads the lookup_fast programs only with -a. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dcsnoop.h"
#include "dcache.bpf.h"
#include "events.bpf.h"
#include "filters.bpf.h"
#include "task.bpf.h"

/* fs/namei.c's walk state: the component being looked up. */
struct nameidata___dc {
	struct qstr last;
} __attribute__((preserve_access_index));

/* The record's layout and its types, kept in BTF for the front end. */
struct event event_layout = {};
enum dc_lookup dc_lookup_btf;

static __always_inline bool allowed(void)
{
	return task_allowed(bpf_get_current_pid_tgid()) && cgroup_allowed();
}

static __always_inline void looked_up(const unsigned char *name, __u32 type)
{
	struct event e = {};

	task_header_now(&e.task);
	e.type = type;
	bpf_probe_read_kernel_str(e.name, sizeof(e.name), name);
	emit(&e, sizeof(e));
}

static __always_inline void fast(struct nameidata___dc *nd)
{
	if (allowed())
		looked_up(BPF_CORE_READ(nd, last.name), DC_REFERENCE);
}

SEC("fentry/lookup_fast")
int BPF_PROG(dc_fentry_fast, struct nameidata___dc *nd)
{
	fast(nd);
	return 0;
}

static __always_inline void looked_up_slow(const void *parent, const struct qstr *name,
					   bool found)
{
	if (allowed() && dc_lookup_missed(parent, name, found))
		looked_up(BPF_CORE_READ(name, name), DC_MISS);
}

static __always_inline void allocating(const void *parent, const struct qstr *name)
{
	if (allowed() && dc_alloc_missed(parent, name))
		looked_up(BPF_CORE_READ(name, name), DC_MISS);
}

SEC("fexit/d_lookup")
int BPF_PROG(dc_fexit_lookup, const struct dentry *parent, const struct qstr *name,
	     struct dentry *ret)
{
	looked_up_slow(parent, name, ret != 0);
	return 0;
}

SEC("fentry/d_alloc_parallel")
int BPF_PROG(dc_fentry_alloc, const struct dentry *parent, const struct qstr *name)
{
	allocating(parent, name);
	return 0;
}

SEC("kprobe")
int BPF_KPROBE(dc_kprobe_fast, struct nameidata___dc *nd)
{
	fast(nd);
	return 0;
}

SEC("kprobe/d_lookup")
int BPF_KPROBE(dc_kprobe_lookup, const struct dentry *parent, const struct qstr *name)
{
	if (allowed())
		dc_lookup_enter(parent, name);
	return 0;
}

SEC("kretprobe/d_lookup")
int BPF_KRETPROBE(dc_kretprobe_lookup, void *ret)
{
	struct dc_args a;

	if (dc_lookup_args(&a))
		looked_up_slow((void *)a.parent, (const struct qstr *)a.name, ret != 0);
	return 0;
}

SEC("kprobe/d_alloc_parallel")
int BPF_KPROBE(dc_kprobe_alloc, const struct dentry *parent, const struct qstr *name)
{
	allocating(parent, name);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
