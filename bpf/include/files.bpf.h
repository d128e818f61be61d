/* Files seen from a system call: the struct file behind the current task's
 * descriptor, for the tools that time or count at the system calls where
 * the kernel offers no fentry or kprobe on the VFS. */
#ifndef __FILES_BPF_H
#define __FILES_BPF_H

#include <bpf/bpf_core_read.h>

/* f_mode bit set by an open that created the file (include/linux/fs.h,
 * 4.19+). */
#define FMODE_CREATED 0x100000

/* Set by the front end (common::kernel::probe::current_task_btf): the
 * kernel has bpf_get_current_task_btf (5.11+). Where it has not, the calls
 * to it are dead code, which the verifier does not check. */
const volatile bool current_task_btf = false;

/* Set by the front end (common::kernel::probe::rdonly_cast): the kernel has
 * the bpf_rdonly_cast kfunc (6.2+), which the verifier turns into a move.
 * A rodata flag rather than bpf_ksym_exists, whose load of a kfunc's
 * address kernels before 6.4 refuse even in dead code. */
const volatile bool rdonly_cast = false;

/* A pointer cast with bpf_rdonly_cast is read with direct (fault-safe)
 * loads rather than a probe-read helper call each. The descriptor's slot
 * is read as a kiocb, whose first member is a struct file pointer. */
static __always_inline bool fast_file_loads(void)
{
	return current_task_btf && rdonly_cast &&
	       bpf_core_field_offset(struct kiocb, ki_filp) == 0;
}

/* The file open at `fd` in the current task, or NULL, from a tp_btf
 * program: the task's pointers followed with direct loads where the kernel
 * allows (a helper call each costs more than the rest of a read's
 * accounting), else with probe reads; the descriptor's slot with a direct
 * load where fast_file_loads(), else with one probe read. */
static __always_inline struct file *fd_file(long fd)
{
	struct fdtable *fdt;
	struct file **fds;
	struct file *f = 0;

	if (current_task_btf) {
		fdt = bpf_get_current_task_btf()->files->fdt;
		if (fd < 0 || fd >= fdt->max_fds)
			return 0;
		fds = fdt->fd;
		if (fast_file_loads())
			return bpf_core_cast(&fds[fd], struct kiocb)->ki_filp;
	} else {
		fdt = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), files, fdt);
		if (!fdt || fd < 0 || fd >= BPF_CORE_READ(fdt, max_fds))
			return 0;
		fds = BPF_CORE_READ(fdt, fd);
	}
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

/* The inode of `f`, from fd_file. */
static __always_inline struct inode *fd_file_inode(struct file *f)
{
	if (fast_file_loads())
		return bpf_core_cast(f, struct file)->f_inode;
	return BPF_CORE_READ(f, f_inode);
}

#endif
