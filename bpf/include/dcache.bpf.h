/* The dentry cache's misses, for dcstat and dcsnoop: a name the cache did
 * not have. BCC counts a miss where d_lookup finds nothing; since 4.7 the
 * walk no longer calls d_lookup when lookup_fast misses, but allocates the
 * name's dentry with d_alloc_parallel and asks the file system (a stat of
 * a name never seen). Both are misses here, once each: lookup_open calls
 * d_lookup and then, where it missed, d_alloc_parallel for the same name in
 * the same directory (a create), which is not counted again. */
#ifndef __DCACHE_BPF_H
#define __DCACHE_BPF_H

/* A lookup's directory and name (its hash and length). */
struct dc_name {
	__u64 parent;
	__u64 hash_len;
};

/* Per thread: its last d_lookup that missed, until a d_alloc_parallel of
 * the same name (or the thread's next miss). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct dc_name);
} dc_missed SEC(".maps");

/* Per thread: d_lookup's arguments, from its kprobe to its kretprobe. */
struct dc_args {
	__u64 parent;
	__u64 name;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct dc_args);
} dc_lookups SEC(".maps");

static __always_inline __u32 dc_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

static __always_inline struct dc_name dc_name_of(const void *parent, const struct qstr *name)
{
	struct dc_name n = {
		.parent = (__u64)parent,
		.hash_len = BPF_CORE_READ(name, hash_len),
	};

	return n;
}

/* d_lookup returned (`found`: a dentry): true if it missed, remembered for
 * the d_alloc_parallel that may follow. */
static __always_inline bool dc_lookup_missed(const void *parent, const struct qstr *name,
					     bool found)
{
	__u32 tid = dc_tid();
	struct dc_name n;

	if (found)
		return false;
	n = dc_name_of(parent, name);
	bpf_map_update_elem(&dc_missed, &tid, &n, BPF_ANY);
	return true;
}

/* d_alloc_parallel called: true if it is a miss not counted yet (no
 * d_lookup of the same name missed just before). */
static __always_inline bool dc_alloc_missed(const void *parent, const struct qstr *name)
{
	__u32 tid = dc_tid();
	struct dc_name *last = bpf_map_lookup_elem(&dc_missed, &tid);
	struct dc_name n;

	struct dc_name l;

	if (!last)
		return true;
	l = *last;
	bpf_map_delete_elem(&dc_missed, &tid);
	n = dc_name_of(parent, name);
	return l.parent != n.parent || l.hash_len != n.hash_len;
}

/* kprobes: d_lookup's arguments kept at its entry for its return. */
static __always_inline void dc_lookup_enter(const void *parent, const struct qstr *name)
{
	__u32 tid = dc_tid();
	struct dc_args a = { .parent = (__u64)parent, .name = (__u64)name };

	bpf_map_update_elem(&dc_lookups, &tid, &a, BPF_ANY);
}

/* kretprobes: d_lookup's arguments, taken (false where its entry was not
 * seen). */
static __always_inline bool dc_lookup_args(struct dc_args *a)
{
	__u32 tid = dc_tid();
	struct dc_args *kept = bpf_map_lookup_elem(&dc_lookups, &tid);

	if (!kept)
		return false;
	*a = *kept;
	bpf_map_delete_elem(&dc_lookups, &tid);
	return true;
}

#endif
