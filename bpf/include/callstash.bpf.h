/* A system call's arguments kept at its entry for its exit, by thread: what
 * the tools on the calls' own tracepoints do where bpf_task_pt_regs (5.15+)
 * cannot read them from the task's registers at exit. One per program
 * object: CALL_STASH(struct my_call) makes the map and its two helpers. */
#ifndef __CALLSTASH_BPF_H
#define __CALLSTASH_BPF_H

#define CALL_STASH(value_type)                                                 \
	struct {                                                               \
		__uint(type, BPF_MAP_TYPE_HASH);                               \
		__uint(max_entries, 10240);                                    \
		__type(key, __u32);                                            \
		__type(value, value_type);                                     \
	} calls SEC(".maps");                                                  \
                                                                               \
	static __always_inline int stash_call(const value_type *c)             \
	{                                                                      \
		__u32 tid = (__u32)bpf_get_current_pid_tgid();                 \
                                                                               \
		bpf_map_update_elem(&calls, &tid, c, BPF_ANY);                 \
		return 0;                                                      \
	}                                                                      \
                                                                               \
	/* The thread's call, taken out of the map; false if none. */          \
	static __always_inline bool take_call(value_type *out)                 \
	{                                                                      \
		__u32 tid = (__u32)bpf_get_current_pid_tgid();                 \
		value_type *c = bpf_map_lookup_elem(&calls, &tid);             \
                                                                               \
		if (!c)                                                        \
			return false;                                          \
		*out = *c;                                                     \
		bpf_map_delete_elem(&calls, &tid);                             \
		return true;                                                   \
	}

#endif
