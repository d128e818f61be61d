/* Files seen from a system call: the struct file behind the current task's
 * descriptor, for the tools that time or count at the system calls where
 * the kernel offers no fentry or kprobe on the VFS. */
#ifndef __FILES_BPF_H
#define __FILES_BPF_H

#include <bpf/bpf_core_read.h>

/* f_mode bit set by an open that created the file (include/linux/fs.h,
 * 4.19+). */
#define FMODE_CREATED 0x100000

/* The file open at `fd` in the current task, or NULL. */
static __always_inline struct file *fd_file(long fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds;
	struct file *f = 0;

	if (!fdt || fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_core_read(&f, sizeof(f), &fds[fd]);
	return f;
}

/* fd_file() for tp_btf programs: the task's pointers followed with direct
 * loads (a helper call each costs more than the rest of a read's
 * accounting), the descriptor's slot with one probe read. */
static __always_inline struct file *fd_file_btf(long fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	struct file **fds;
	struct file *f = 0;

	if (fd < 0 || fd >= fdt->max_fds)
		return 0;
	fds = fdt->fd;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

#endif
