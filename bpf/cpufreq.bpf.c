// SPDX-License-Identifier: GPL-2.0
/* cpufreq: the frequency of each CPU while tasks run on it, sampled: a
 * perf event per CPU (cpu-clock, -f Hz) finds the CPU's frequency as the
 * kernel last set it (power:cpu_frequency, which cpufreq drivers fire at
 * each change; the front end fills in each CPU's at the start from sysfs)
 * and adds the sample to linear histograms (step_mhz wide slots) of the
 * machine and of the task's process. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "cpufreq.h"
#include "hist.h"
#include "maps.bpf.h"
#include "filters.bpf.h"

const volatile __u32 step_mhz = 200;
const volatile bool per_pid = false;
const volatile bool by_cgroup = false;

struct freq_key key_layout = {};

/* Each CPU's frequency in MHz, by CPU (sized to the possible CPUs). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} freqs_mhz SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct freq_key);
	__type(value, struct hist);
} hists SEC(".maps");

static struct hist zero_hist;

static __always_inline void add(struct freq_key *key, __u32 slot, __u32 mhz)
{
	struct hist *h = lookup_or_try_init(&hists, key, &zero_hist);

	if (!h)
		return;
	/* Kept from the compiler, which would index with a value the
	 * verifier cannot bound. */
	barrier_var(slot);
	if (slot < MAX_SLOTS)
		__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->total, mhz);
}

SEC("perf_event")
int cf_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id(), *mhz, slot;
	struct freq_key key = { .machine = 1 };

	mhz = bpf_map_lookup_elem(&freqs_mhz, &cpu);
	/* Not known yet (a CPU that came online since the start, before its
	 * first change). */
	if (!mhz || !*mhz)
		return 0;
	if (!task_allowed(id) || !cgroup_allowed())
		return 0;
	slot = *mhz / step_mhz;
	if (slot >= MAX_SLOTS)
		slot = MAX_SLOTS - 1;
	add(&key, slot, *mhz);
	key.machine = 0;
	if (per_pid)
		key.pid = id >> 32;
	if (by_cgroup)
		key.cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(&key.comm, sizeof(key.comm));
	add(&key, slot, *mhz);
	return 0;
}

static __always_inline int on_change(unsigned int khz, unsigned int cpu)
{
	__u32 mhz = khz / 1000;

	bpf_map_update_elem(&freqs_mhz, &cpu, &mhz, BPF_ANY);
	return 0;
}

SEC("tp_btf/cpu_frequency")
int BPF_PROG(cf_btf_change, unsigned int state, unsigned int cpu_id)
{
	return on_change(state, cpu_id);
}

SEC("raw_tp/cpu_frequency")
int BPF_PROG(cf_raw_change, unsigned int state, unsigned int cpu_id)
{
	return on_change(state, cpu_id);
}

char LICENSE[] SEC("license") = "GPL";
