// SPDX-License-Identifier: GPL-2.0
/* profile: on-CPU stack sampling. A perf event per CPU (hardware cycles, or
 * the software CPU clock) runs pr_sample at -F Hz or every -c events; the
 * samples are counted in the kernel by process and stacks, or, with
 * --unwind dwarf, sent with a copy of the user stack for the front end to
 * unwind. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "profile.h"
#include "filters.bpf.h"
#include "maps.bpf.h"
#include "errors.bpf.h"
#include "stacks.bpf.h"
#include "seenpids.bpf.h"
/* --unwind dwarf's copies: at most -F per CPU per second. */
#define RINGBUF_BYTES (8 << 20)
#include "ustack.bpf.h"

#define PF_KTHREAD 0x00200000

const volatile bool user_stacks = true;
const volatile bool kernel_stacks = true;
const volatile bool include_idle = false;
const volatile bool per_thread = false;
STACK_MAP(stackmap);

/* Samples by key. Preallocated: a hardware event's program runs in NMI
 * context, where only preallocated hash maps may be updated. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct pr_key);
	__type(value, __u64);
} counts SEC(".maps");

SEC("perf_event")
int pr_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), *n, ip, sp, bp;
	__u32 tid = (__u32)id, pid = id >> 32;
	struct task_struct *task;
	struct pr_sample rec;
	struct pr_key key;
	bool user;

	/* tid 0: a CPU's idle task (swapper/N). */
	if (!tid && !include_idle)
		return 0;
	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	task = (struct task_struct *)bpf_get_current_task();
	/* A kernel thread has no user stack: none, not missed. */
	user = user_stacks && tid && !(BPF_CORE_READ(task, flags) & PF_KTHREAD);

	__builtin_memset(&key, 0, sizeof(key));
	key.pid = pid;
	key.tid = per_thread ? tid : 0;
	key.kern_stack_id = kernel_stacks ? stack_id_or_none(ctx, &stackmap, 0) : -1;
	bpf_get_current_comm(&key.comm, sizeof(key.comm));

	if (dwarf_unwind) {
		__builtin_memset(&rec, 0, sizeof(rec));
		rec.seq = 0;
		if (user) {
			rec.seq = PR_SEQ_LOST;
			if (ustack_user_regs(task, &ip, &sp, &bp))
				rec.seq = ustack_send(ip, sp, bp) ?: PR_SEQ_LOST;
		}
		rec.kind = PR_SAMPLE_KIND;
		rec.pid = pid;
		rec.tid = key.tid;
		rec.kern_stack_id = key.kern_stack_id;
		__builtin_memcpy(rec.comm, key.comm, sizeof(rec.comm));
		emit(&rec, sizeof(rec));
		return 0;
	}

	key.user_stack_id = user ? stack_id(ctx, &stackmap, BPF_F_USER_STACK) : -1;
	if (user)
		note_process(pid);
	n = bpf_map_lookup_elem(&counts, &key);
	if (!n) {
		static const __u64 zero;

		n = lookup_or_try_init(&counts, &key, &zero);
		if (!n) {
			count_error(ERR_COUNTS_FULL);
			return 0;
		}
	}
	__sync_fetch_and_add(n, 1);
	return 0;
}

/* Keep the shared types in BTF for the front end. */
enum pr_error pr_error_btf;
enum pr_record_kind pr_record_kind_btf;
struct pr_sample pr_sample_layout;

char LICENSE[] SEC("license") = "GPL";
