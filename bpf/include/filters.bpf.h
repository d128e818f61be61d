/* Filters shared by the tools, set from user space before load (rodata) or
 * after it (maps). Each helper answers "should this task be traced?". */
#ifndef __FILTERS_BPF_H
#define __FILTERS_BPF_H

#define INVALID_UID ((__u32)-1)
#define MAX_FILTER_IDS 1024

const volatile bool filter_cgroup = false;
const volatile bool filter_pids = false;
const volatile bool filter_tids = false;
const volatile __u32 filter_uid = INVALID_UID;
/* The tool's own process, set by the lifecycle: a tool never reports itself
 * (its output writes would feed back into what it traces). */
const volatile __u32 self_tgid = 0;

/* Holds one cgroup v2 directory fd, put there by common::kernel::filters. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/* Sets of tgids (-p) and tids (-t); the value is unused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_FILTER_IDS);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_FILTER_IDS);
	__type(key, __u32);
	__type(value, __u8);
} tid_filter SEC(".maps");

static __always_inline bool cgroup_allowed(void)
{
	return !filter_cgroup || bpf_current_task_under_cgroup(&cgroup_filter, 0) > 0;
}

static __always_inline bool uid_allowed(__u32 uid)
{
	return filter_uid == INVALID_UID || uid == filter_uid;
}

static __always_inline bool not_self(__u32 tgid)
{
	return tgid != self_tgid;
}

/* -p and -t alone, for a hook that may run in interrupt context, where
 * the current task is whichever one the CPU interrupted (tcpdrop's drops
 * in softirq): leaving the tool's own process out there would drop other
 * processes' events. `id` is what bpf_get_current_pid_tgid() returns. */
static __always_inline bool ids_allowed(__u64 id)
{
	__u32 tgid = id >> 32, tid = (__u32)id;

	if (filter_pids && !bpf_map_lookup_elem(&pid_filter, &tgid))
		return false;
	if (filter_tids && !bpf_map_lookup_elem(&tid_filter, &tid))
		return false;
	return true;
}

/* True when -p, -t or a cgroup narrows what is traced: a hook that runs on
 * every system call may then leave the others out at once, and otherwise
 * put its checks off to the rare event it reports. */
static __always_inline bool narrowed(void)
{
	return filter_pids || filter_tids || filter_cgroup;
}

/* For hooks in the task's own context (system calls, its own switches):
 * -p, -t, and never the tool's own process. */
static __always_inline bool task_allowed(__u64 id)
{
	return not_self(id >> 32) && ids_allowed(id);
}

#endif
