/* Failures the kernel side counts instead of hiding: stack map collisions,
 * full maps. One per-CPU counter per value of the tool's error enum (in its
 * header, included first), whose last value is ERR_MAX; common::run::lifecycle
 * reports each non-zero counter at exit, with the note the front end gives
 * for that enum value (the tool keeps the enum in BTF with a global of its
 * type, so the front end matches on generated constants). */
#ifndef __ERRORS_BPF_H
#define __ERRORS_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ERR_MAX);
	__type(key, __u32);
	__type(value, __u64);
} errors SEC(".maps");

static __always_inline void count_error(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&errors, &which);

	if (n)
		*n += 1;
}

#endif
