// SPDX-License-Identifier: GPL-2.0
/* filelife: files created and deleted while tracing, with their age.
 *
 * A file's birth is stamped by its dentry at security_inode_create (every
 * create, by open(O_CREAT) or mknod's vfs_create alike), or where that is
 * not traceable at vfs_create and at vfs_open of a file the open created
 * (FMODE_CREATED). Its death is a successful vfs_unlink. Each in fentry
 * programs where the kernel allows, else kprobes: the VFS has no
 * tracepoints for either.
 *
 * Where the kernel has neither (the tracepoint mode), the file systems' own
 * tracepoints: ext4's unlink, and xfs's remove followed by the unlinking of
 * the inode whose last name went. Both inodes keep their creation time
 * (i_crtime), so the age is the file's true one, whether it was created
 * before tracing or since. */
#include <vmlinux.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "filelife.h"
#include "events.bpf.h"
#include "task.bpf.h"
#include "files.bpf.h"
#include "filters.bpf.h"
#include "syscalls.bpf.h"

/* vfs_create's and vfs_unlink's argument counts, from the kernel's BTF:
 * 5.12 put a user namespace (6.3: an idmap) before their arguments. */
const volatile __u32 create_args = 4;
const volatile __u32 unlink_args = 3;

/* Births by dentry; LRU: files never deleted leave theirs. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct dentry *);
	__type(value, __u64);
} births SEC(".maps");

/* The dentry a thread is unlinking, from a kprobe to its kretprobe. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, struct dentry *);
} unlinking SEC(".maps");

/* Argument slot `i` of an fentry/fexit program, copied out of its
 * context at a constant offset: choosing the slot at run time would make a
 * variable-offset context load, which the verifier refuses (and the
 * compiler may merge two constant loads into one). */
#define ctx_arg(ctx, i)                                                   \
	({                                                                \
		void *__arg = 0;                                          \
		bpf_probe_read_kernel(&__arg, sizeof(__arg), &(ctx)[i]);  \
		__arg;                                                    \
	})

static __always_inline void born(struct dentry *d)
{
	__u64 id = bpf_get_current_pid_tgid(), now;

	if (!d || !task_allowed(id) || !cgroup_allowed())
		return;
	now = bpf_ktime_get_ns();
	bpf_map_update_elem(&births, &d, &now, BPF_ANY);
}

static __always_inline void opened(struct path *path, struct file *f)
{
	if (BPF_CORE_READ(f, f_mode) & FMODE_CREATED)
		born(BPF_CORE_READ(path, dentry));
}

static __always_inline void died(struct dentry *d)
{
	__u64 *birth = bpf_map_lookup_elem(&births, &d);
	struct life_event e = {};
	const unsigned char *name;

	if (!birth)
		return;
	task_header_now(&e.task);
	e.age_ns = e.task.ts_ns - *birth;
	bpf_map_delete_elem(&births, &d);
	name = BPF_CORE_READ(d, d_name.name);
	bpf_probe_read_kernel_str(e.name, sizeof(e.name), name);
	emit(&e, sizeof(e));
}

SEC("fentry/security_inode_create")
int BPF_PROG(fl_fentry_inode_create, struct inode *dir, struct dentry *dentry)
{
	born(dentry);
	return 0;
}

SEC("fentry/vfs_create")
int fl_fentry_create(unsigned long long *ctx)
{
	void *a1 = ctx_arg(ctx, 1), *a2 = ctx_arg(ctx, 2);

	born(create_args == 4 ? a1 : a2);
	return 0;
}

SEC("fentry/vfs_open")
int BPF_PROG(fl_fentry_open, struct path *path, struct file *f)
{
	opened(path, f);
	return 0;
}

SEC("fexit/vfs_unlink")
int fl_fexit_unlink(unsigned long long *ctx)
{
	/* The dentry stays valid, and named, past the unlink; the return
	 * value follows the arguments. */
	void *a1 = ctx_arg(ctx, 1), *a2 = ctx_arg(ctx, 2);
	long r3 = (long)ctx_arg(ctx, 3), r4 = (long)ctx_arg(ctx, 4);

	if (unlink_args == 3 ? (int)r3 == 0 : (int)r4 == 0)
		died(unlink_args == 3 ? a1 : a2);
	return 0;
}

SEC("kprobe/security_inode_create")
int BPF_KPROBE(fl_kprobe_inode_create, struct inode *dir, struct dentry *dentry)
{
	born(dentry);
	return 0;
}

SEC("kprobe/vfs_create")
int BPF_KPROBE(fl_kprobe_create, void *a0, void *a1, void *a2)
{
	born(create_args == 4 ? a1 : a2);
	return 0;
}

SEC("kprobe/vfs_open")
int BPF_KPROBE(fl_kprobe_open, struct path *path, struct file *f)
{
	opened(path, f);
	return 0;
}

SEC("kprobe/vfs_unlink")
int BPF_KPROBE(fl_kprobe_unlink, void *a0, void *a1, void *a2)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct dentry *d = unlink_args == 3 ? a1 : a2;

	if (bpf_map_lookup_elem(&births, &d))
		bpf_map_update_elem(&unlinking, &tid, &d, BPF_ANY);
	return 0;
}

SEC("kretprobe/vfs_unlink")
int BPF_KRETPROBE(fl_kretprobe_unlink, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct dentry **d = bpf_map_lookup_elem(&unlinking, &tid);

	if (!d)
		return 0;
	if (ret == 0)
		died(*d);
	bpf_map_delete_elem(&unlinking, &tid);
	return 0;
}

/* CLOCK_REALTIME less CLOCK_BOOTTIME when the tool started (the front end
 * sets it): i_crtime is wall-clock time; the boot clock keeps counting
 * through a suspend, which the monotonic one does not. */
const volatile __s64 boot_to_real_ns = 0;
/* The unlink, unlinkat and rmdir system calls' numbers here (the front end
 * sets them): xfs's deaths are told apart from a rename's by them. */
const volatile __u32 sys_unlink = -1, sys_unlinkat = -1, sys_rmdir = -1;

#define S_IFMT 00170000
#define S_IFREG 0100000

/* The age of a file created at `born_s`.`born_ns` (its inode's creation
 * time, wall clock), now; 0 where the inode keeps none (ext4's 128-byte
 * inodes read back from disk, xfs v4). */
static __always_inline __u64 age_now(__s64 born_s, __s64 born_ns)
{
	__s64 born = born_s * 1000000000LL + born_ns, now;

	if (!born)
		return 0;
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_ktime_get_boot_ns))
		now = bpf_ktime_get_boot_ns();
	else
		now = bpf_ktime_get_ns();
	now += boot_to_real_ns;
	return now > born ? now - born : 1;
}

/* ext4 deleted a name (the dentry still holds its inode at the
 * tracepoint): a regular file whose last link it was, aged from its
 * inode's creation time. */
SEC("tp_btf/ext4_unlink_exit")
int BPF_PROG(fl_ext4_unlink, struct dentry *dentry, int ret)
{
	struct ext4_inode_info *ei;
	struct life_event e = {};
	struct inode *inode;

	/* Checked before any use: a module's tracepoint arguments may be
	 * NULL to the verifier (6.12), which then refuses arithmetic on them. */
	if (!dentry || ret || !task_allowed(bpf_get_current_pid_tgid()) || !cgroup_allowed())
		return 0;
	/* Read, not loaded: a scalar, from which ext4's own inode is found
	 * (pointer arithmetic on a BTF pointer is the verifier's to refuse). */
	inode = BPF_CORE_READ(dentry, d_inode);
	if (!inode || (BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFREG ||
	    BPF_CORE_READ(inode, i_nlink))
		return 0;
	/* The inode is the vfs_inode member of ext4's own. */
	ei = (void *)inode - bpf_core_field_offset(struct ext4_inode_info, vfs_inode);
	e.age_ns = age_now(BPF_CORE_READ(ei, i_crtime.tv_sec), BPF_CORE_READ(ei, i_crtime.tv_nsec));
	if (!e.age_ns)
		return 0;
	task_header_now(&e.task);
	bpf_probe_read_kernel_str(e.name, sizeof(e.name), BPF_CORE_READ(dentry, d_name.name));
	emit(&e, sizeof(e));
	return 0;
}

/* xfs: the name a thread is removing, from xfs_remove to the xfs_iunlink
 * of the inode that lost its last link within it. LRU: a remove that
 * unlinks no inode (another link is left, or it failed) leaves its entry,
 * which the thread's next remove replaces; an iunlink outside an unlink or
 * rmdir (a rename over a file, O_TMPFILE) does not read it. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, const unsigned char *);
} xfs_removing SEC(".maps");

SEC("tp_btf/xfs_remove")
int BPF_PROG(fl_xfs_remove, struct xfs_inode *dp, struct xfs_name *name)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	const unsigned char *s;

	if (!name || !task_allowed(id) || !cgroup_allowed())
		return 0;
	s = BPF_CORE_READ(name, name);
	bpf_map_update_elem(&xfs_removing, &tid, &s, BPF_ANY);
	return 0;
}

/* True if the current task is in an unlink, unlinkat or rmdir system call
 * (its saved registers: bpf_task_pt_regs, 5.15+; before, assumed). */
static __always_inline bool in_unlink(void)
{
	struct pt_regs *regs;
	__u32 nr;

	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return true;
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	nr = SYSCALL_NR_READ(regs);
	return nr == sys_unlink || nr == sys_unlinkat || nr == sys_rmdir;
}

SEC("tp_btf/xfs_iunlink")
int BPF_PROG(fl_xfs_iunlink, struct xfs_inode *ip)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	const unsigned char **name;
	struct life_event e = {};

	if (!ip || !in_unlink())
		return 0;
	name = bpf_map_lookup_elem(&xfs_removing, &tid);
	if (!name)
		return 0;
	/* Read while the remove that named it is still under way. */
	bpf_probe_read_kernel_str(e.name, sizeof(e.name), *name);
	bpf_map_delete_elem(&xfs_removing, &tid);
	/* Before 5.10 the creation time was in i_d: not read there. */
	if (!bpf_core_field_exists(ip->i_crtime) ||
	    (BPF_CORE_READ(ip, i_vnode.i_mode) & S_IFMT) != S_IFREG)
		return 0;
	e.age_ns = age_now(BPF_CORE_READ(ip, i_crtime.tv_sec), BPF_CORE_READ(ip, i_crtime.tv_nsec));
	if (!e.age_ns)
		return 0;
	task_header_now(&e.task);
	emit(&e, sizeof(e));
	return 0;
}

/* Keeps the record type in BTF for the front end. */
struct life_event life_event_btf;

char LICENSE[] SEC("license") = "GPL";
