// SPDX-License-Identifier: GPL-2.0
/* dcsnoop: each dentry cache lookup that failed (d_lookup returning no
 * dentry), and with -a each path component looked up (lookup_fast), with
 * the task and the name, as BCC's dcsnoop traces them.
 *
 * No tracepoint covers the dentry cache: fentry and fexit where the kernel
 * allows, else kprobes and a kretprobe (attached by the front end, which
 * finds lookup_fast under a compiler's suffix where it has one). The front
 * end loads the lookup_fast programs only with -a. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "dcsnoop.h"
#include "events.bpf.h"
#include "filters.bpf.h"
#include "task.bpf.h"

/* fs/namei.c's walk state: the component being looked up. */
struct nameidata___dc {
	struct qstr last;
} __attribute__((preserve_access_index));

/* The name each thread's d_lookup was called with, for its return
 * (kretprobes only: fexit has the arguments). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, const unsigned char *);
} lookups SEC(".maps");

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

SEC("fexit/d_lookup")
int BPF_PROG(dc_fexit_lookup, const struct dentry *parent, const struct qstr *name,
	     struct dentry *ret)
{
	if (!ret && allowed())
		looked_up(BPF_CORE_READ(name, name), DC_MISS);
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
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	const unsigned char *n;

	if (!allowed())
		return 0;
	n = BPF_CORE_READ(name, name);
	bpf_map_update_elem(&lookups, &tid, &n, BPF_ANY);
	return 0;
}

SEC("kretprobe/d_lookup")
int BPF_KRETPROBE(dc_kretprobe_lookup, void *ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	const unsigned char **n = bpf_map_lookup_elem(&lookups, &tid);

	if (!n)
		return 0;
	if (!ret)
		looked_up(*n, DC_MISS);
	bpf_map_delete_elem(&lookups, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
