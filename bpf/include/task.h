/* Task facts the tools' records carry. */
#ifndef __TASK_H
#define __TASK_H

/* The kernel's comm length (include/linux/sched.h), with its NUL. */
#define TASK_COMM_LEN 16

/* The head of every event tool's record (its first member, named `task`),
 * decoded once by common::kinds::event::Stamps: who, when, in which cgroup.
 * Filled by task_header_now (task.bpf.h) in the task's context, or copied
 * from a stash where the event completes elsewhere (a disk interrupt, a
 * socket's softirq), with ts_ns set to the event's own time. */
struct task_header {
	/* ktime of the event. */
	__u64 ts_ns;
	/* The task's cgroup v2 id (the inode of its cgroup directory). */
	__u64 cgroup_id;
	__u32 pid;
	__u32 tid;
	char comm[TASK_COMM_LEN];
	/* The process's id in its own pid namespace (a container's view);
	 * filled only with --containers (task.bpf.h's ns_pids), else 0. */
	__u32 ns_pid;
	__u32 pad;
};

#endif
