/* Map helpers. */
#ifndef __MAPS_BPF_H
#define __MAPS_BPF_H

#include <bpf/bpf_helpers.h>

#ifndef EEXIST
#define EEXIST 17
#endif

/* Look up `key`, inserting `init` first when it is missing. Another CPU may
 * insert it between the two steps, which is why EEXIST is not an error. */
static __always_inline void *lookup_or_try_init(void *map, const void *key, const void *init)
{
	void *val = bpf_map_lookup_elem(map, key);
	long err;

	if (val)
		return val;
	err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (err && err != -EEXIST)
		return 0;
	return bpf_map_lookup_elem(map, key);
}

/* A value of `value_type` per task: `start_storage` in task local storage
 * for the tp_btf programs, `start` a hash map by thread for the raw_tp ones,
 * whose task pointers are untrusted (common::kernel::probe::
 * task_state_variant keeps one and drops the other). */
#define TASK_START_MAPS_OF(value_type)					\
	struct {							\
		__uint(type, BPF_MAP_TYPE_TASK_STORAGE);		\
		__uint(map_flags, BPF_F_NO_PREALLOC);			\
		__type(key, int);					\
		__type(value, value_type);				\
	} start_storage SEC(".maps");					\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__uint(max_entries, 10240);				\
		__type(key, __u32);					\
		__type(value, value_type);				\
	} start SEC(".maps")

/* A u64 per task (a time, mostly). */
#define TASK_START_MAPS() TASK_START_MAPS_OF(__u64)

#endif
