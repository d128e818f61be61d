/* Processes whose user stacks a stack tool recorded since its front end
 * last looked: the front end keeps their memory maps, so that their stacks
 * keep their names when they exit before the report
 * (common::kinds::stack::ProcessKeeper). */
#ifndef __SEENPIDS_BPF_H
#define __SEENPIDS_BPF_H

/* Set where user stacks are symbolized from the stack map at the report. */
const volatile bool track_pids = false;

/* Preallocated: profile's program may run in NMI context. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} seen_pids SEC(".maps");

static __always_inline void note_process(__u32 tgid)
{
	static const __u8 one = 1;

	if (track_pids && !bpf_map_lookup_elem(&seen_pids, &tgid))
		bpf_map_update_elem(&seen_pids, &tgid, &one, BPF_NOEXIST);
}

#endif
