// SPDX-License-Identifier: GPL-2.0
/* profile: on-CPU stack sampling. A perf event per CPU (hardware cycles, or
 * the software CPU clock) runs pr_sample at -F Hz or every -c events; each
 * sample counts one for its process and stacks (stackcounts.bpf.h), in the
 * kernel, or with --unwind dwarf in the front end, which unwinds the user
 * stack's copy. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "profile.h"
#include "filters.bpf.h"
#include "maps.bpf.h"
#include "errors.bpf.h"
/* --unwind dwarf's copies: at most -F per CPU per second. */
#define RINGBUF_BYTES (8 << 20)
#include "stackcounts.bpf.h"

const volatile bool include_idle = false;
const volatile bool per_thread = false;

SEC("perf_event")
int pr_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), seq;
	__u32 tid = (__u32)id, pid = id >> 32;
	struct stack_key key;

	/* tid 0: a CPU's idle task (swapper/N). */
	if (!tid && !include_idle)
		return 0;
	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	__builtin_memset(&key, 0, sizeof(key));
	key.tgid = pid;
	key.tid = per_thread ? tid : 0;
	bpf_get_current_comm(&key.comm, sizeof(key.comm));
	if (per_container)
		key.cgroup_id = bpf_get_current_cgroup_id();
	seq = take_stacks(ctx, (struct task_struct *)bpf_get_current_task(), pid, &key);
	count_stacks(&key, seq, 1);
	return 0;
}

/* Keeps the error enum in BTF for the front end. */
enum pr_error pr_error_btf;

char LICENSE[] SEC("license") = "GPL";
