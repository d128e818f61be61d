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

#endif
