/* The names of a dentry and its parents up to the root, crossing mount
 * points, appended to a record's buffer: what a tool shows as a file's
 * absolute path (the front end joins them, root first:
 * common::output::walked_path). bpf_d_path would do it in one call, but
 * only from the few functions it is allowed in, none of them a
 * tracepoint. */
#ifndef __PATHS_BPF_H
#define __PATHS_BPF_H

#include <bpf/bpf_core_read.h>
#include "paths.h"

/* Appends the names from `dentry` (a name of it included) up to the root
 * into buf (WALK_BUF_SIZE bytes) from `off`, each NUL-terminated; counts
 * them in *depth, sets *truncated where the walk stopped early (too deep,
 * or out of room). Returns the offset after the last. */
static __always_inline __u32 walk_path(char *buf, __u32 off, struct dentry *dentry,
				       struct vfsmount *vfsmnt, __u16 *depth, __u8 *truncated)
{
	__u64 mnt_offset = bpf_core_field_offset(struct mount, mnt);
	struct mount *mnt = (void *)vfsmnt - mnt_offset;
	int i;

	for (i = 0; i < MAX_DIR_DEPTH; i++) {
		struct dentry *mnt_root = BPF_CORE_READ(vfsmnt, mnt_root);
		struct dentry *parent = BPF_CORE_READ(dentry, d_parent);
		const unsigned char *name;
		long len;

		if (dentry == mnt_root || dentry == parent) {
			struct mount *mnt_parent = BPF_CORE_READ(mnt, mnt_parent);

			if (dentry != mnt_root || mnt == mnt_parent)
				return off; /* the root of the root mount */
			dentry = BPF_CORE_READ(mnt, mnt_mountpoint);
			mnt = mnt_parent;
			vfsmnt = (void *)mnt + mnt_offset;
			continue;
		}
		if (off >= WALK_BUF_SIZE - NAME_MAX - 1)
			break;
		name = BPF_CORE_READ(dentry, d_name.name);
		len = bpf_probe_read_kernel_str(&buf[off], NAME_MAX + 1, name);
		if (len <= 0)
			break;
		/* A no-op mask (off + len < WALK_BUF_SIZE) that gives every path
		 * the same range for off, so the verifier can prune equal states:
		 * without it the walk's branches exceed its complexity limit. */
		off = (off + len) & (WALK_BUF_SIZE - 1);
		(*depth)++;
		dentry = parent;
	}
	*truncated = 1;
	return off;
}

#ifndef AT_FDCWD
#define AT_FDCWD -100
#endif

/* The directory a relative path passed with `dfd` is relative to: the
 * current task's working directory (AT_FDCWD) or the file open at dfd.
 * False where there is none. */
static __always_inline bool base_dir(__s32 dfd, struct dentry **dentry, struct vfsmount **mnt)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file **fds, *file = 0;
	struct fdtable *fdt;

	if (dfd == AT_FDCWD) {
		struct fs_struct *fs = BPF_CORE_READ(task, fs);

		*dentry = BPF_CORE_READ(fs, pwd.dentry);
		*mnt = BPF_CORE_READ(fs, pwd.mnt);
	} else {
		fdt = BPF_CORE_READ(task, files, fdt);
		fds = BPF_CORE_READ(fdt, fd);
		if (dfd < 0 || dfd >= BPF_CORE_READ(fdt, max_fds) ||
		    bpf_probe_read_kernel(&file, sizeof(file), &fds[dfd]) || !file)
			return false;
		*dentry = BPF_CORE_READ(file, f_path.dentry);
		*mnt = BPF_CORE_READ(file, f_path.mnt);
	}
	return *dentry && *mnt;
}

#endif
