// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: module init, the filesystem and the clock.
 *
 * The filesystem is a root directory and four files, mounted at /sys/kernel/coarse_stat_fs:
 * thread-self and cpu (0444), read-only pages whose mapping holds everything they offer (see
 * include/uapi/coarse_stat_fs.h), and two root's files of text lines, slices (0400, the
 * long-slice watch: slice_report.c) and, on x86-64, fpu (0600, XSAVE/XRSTOR latency: fpu.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs_context.h>
#include <linux/kobject.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/sysfs.h>

#include "clock.h"
#include "compat.h"
#include "csf.h"

struct csf_clock csf_clock __read_mostly;
struct dentry *csf_debugfs;

/* The largest shift <= 32 for which to * 2^shift / from fits the 32-bit multiplier. */
static void csf_calc_mult_shift(u64 from, u64 to, u32 *mult, u32 *shift)
{
	u32 sft;
	u64 m = 0;

	for (sft = 32; sft > 0; sft--) {
		if (to > U64_MAX >> sft)
			continue;
		m = div64_u64((to << sft) + from / 2, from);
		if (m <= U32_MAX)
			break;
	}
	*mult = m;
	*shift = sft;
}

static int __init csf_clock_init(void)
{
	struct csf_clock *c = &csf_clock;

	c->tsc_hz = csf_counter_hz();
	if (!c->tsc_hz) {
		pr_err("needs a %s with a known frequency; this CPU reports none\n",
		       CSF_COUNTER_NAME);
		return -ENODEV;
	}
	csf_calc_mult_shift(c->tsc_hz, NSEC_PER_SEC, &c->cyc2ns_mult, &c->cyc2ns_shift);
	csf_calc_mult_shift(NSEC_PER_SEC, c->tsc_hz, &c->ns2cyc_mult, &c->ns2cyc_shift);
	csf_calc_mult_shift(c->tsc_hz, USEC_PER_SEC, &c->cyc2us_mult, &c->cyc2us_shift);
	c->flags = csf_counter_flags();
	c->step_cyc = csf_ns_to_cyc(CSF_TSC_STEP_NS);

	/* Not fatal: the buckets still add up, but a cycle is no fixed time (docs/caveats.md). */
	if (!(c->flags & CSF_HDR_TSC_INVARIANT))
		pr_info("%s %llu kHz is not invariant (no constant_tsc/nonstop_tsc): cycles are flagged\n",
			CSF_COUNTER_NAME, div_u64(c->tsc_hz, 1000));
	else if (csf_counter_unstable())
		pr_info("the kernel does not trust the TSC (marked unstable): cycles are flagged\n");
	return 0;
}

/*
 * The header's flags for a page set up now. The CPU's invariance alone is not enough: the kernel
 * may have found the TSC unsynchronized or unstable since boot (or been told so), and then a
 * cycle on one CPU is not a cycle on another.
 */
static u32 csf_hdr_flags(void)
{
	u32 flags = csf_clock.flags;

	if (csf_counter_unstable())
		flags &= ~CSF_HDR_TSC_INVARIANT;
	return flags;
}

void csf_hdr_init(struct csf_hdr *hdr, u16 kind, u32 size)
{
	hdr->magic = CSF_MAGIC;
	hdr->abi_version = CSF_ABI_VERSION;
	hdr->kind = kind;
	hdr->size = size;
	hdr->flags = csf_hdr_flags();
	hdr->tsc_hz = csf_clock.tsc_hz;
	hdr->cyc2ns_mult = csf_clock.cyc2ns_mult;
	hdr->cyc2ns_shift = csf_clock.cyc2ns_shift;
	hdr->counter = CSF_COUNTER;
}

/*
 * The two pages map read-only, shared, at offset 0, at most st_size: anything else is refused, and
 * the mapping can never become writable (mprotect, ptrace and /proc/pid/mem writes need
 * VM_MAYWRITE) or executable.
 */
int csf_mmap_check(struct vm_area_struct *vma, unsigned long size)
{
	/* A read-only MAP_SHARED has VM_MAYSHARE only: VM_SHARED goes when it cannot write. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL; /* MAP_PRIVATE */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM; /* PROT_EXEC; PROT_WRITE already failed: the file is read-only */
	if (vma->vm_pgoff || vma->vm_end - vma->vm_start > size)
		return -ENXIO; /* beyond st_size */
	vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
	return 0;
}

/* The files are the module's: not even root may truncate, chmod or touch them. */
static int csf_setattr(struct csf_idmap *idmap, struct dentry *dentry, struct iattr *attr)
{
	return -EPERM;
}

static const struct inode_operations csf_file_iops = {
	.setattr = csf_setattr,
};

static int csf_create_file(struct super_block *sb, unsigned long ino, const char *name,
			   umode_t mode, const struct file_operations *fops, loff_t size)
{
	struct dentry *dentry;
	struct inode *inode;

	dentry = d_alloc_name(sb->s_root, name);
	if (!dentry)
		return -ENOMEM;
	inode = new_inode(sb);
	if (!inode) {
		dput(dentry);
		return -ENOMEM;
	}
	inode->i_ino = ino;
	inode->i_mode = S_IFREG | mode;
	inode->i_op = &csf_file_iops;
	inode->i_fop = fops;
	inode->i_size = size; /* st_size: the length to map */
	csf_inode_init_ts(inode);
	csf_d_add_persistent(dentry, inode);
	return 0;
}

static int csf_fill_super(struct super_block *sb, struct fs_context *fc)
{
	static const struct tree_descr root_only[] = { { "" } };
	int err;

	/*
	 * Nothing here is executable, whatever the mount options: mmap() then neither adds
	 * PROT_EXEC for READ_IMPLIES_EXEC personalities nor allows it when asked.
	 */
	sb->s_iflags |= SB_I_NOEXEC | SB_I_NODEV;
	err = simple_fill_super(sb, CSF_SUPER_MAGIC, root_only);
	if (!err)
		err = csf_create_file(sb, 2, CSF_THREAD_FILE, 0444, &csf_thread_fops, PAGE_SIZE);
	if (!err)
		err = csf_create_file(sb, 3, CSF_CPU_FILE, 0444, &csf_cpu_fops, csf_cpu_map_size());
	/* Root's: it names other users' tasks. */
	if (!err)
		err = csf_create_file(sb, 4, CSF_SLICES_FILE, 0400, &csf_slices_fops, 0);
#if CSF_HAVE_FPU_FILE
	if (!err)
		err = csf_create_file(sb, 5, CSF_FPU_FILE, 0600, &csf_fpu_fops, 0);
#endif
	return err; /* on error the VFS calls kill_sb, which frees what was made */
}

static int csf_get_tree(struct fs_context *fc)
{
	return get_tree_single(fc, csf_fill_super);
}

static const struct fs_context_operations csf_context_ops = {
	.get_tree = csf_get_tree,
};

static int csf_init_fs_context(struct fs_context *fc)
{
	fc->ops = &csf_context_ops;
	return 0;
}

static struct file_system_type csf_fs_type = {
	.owner = THIS_MODULE,
	.name = CSF_FS_TYPE,
	.init_fs_context = csf_init_fs_context,
	.kill_sb = csf_kill_sb,
};

static int __init csf_init(void)
{
	int err;

	err = csf_clock_init();
	if (err)
		return err;

	/*
	 * Enable the notifier static key once for the module's lifetime rather than per thread:
	 * preempt_notifier_inc() may sleep, and threads die in contexts that may not.
	 */
	preempt_notifier_inc();

	err = csf_thread_init();
	if (err)
		goto out_notifier;
	csf_cpu_init();
	/* Root's diagnostics (fpu_live); none of it needed: the module works without debugfs. */
	csf_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	csf_fpu_init();
	err = csf_slice_init();
	if (err)
		goto out_fpu;
	err = sysfs_create_mount_point(kernel_kobj, CSF_FS_TYPE);
	if (err)
		goto out_slice;
	/* Last: once registered, the filesystem can be mounted, so nothing may fail after it. */
	err = register_filesystem(&csf_fs_type);
	if (err)
		goto out_mount_point;
	return 0;

out_mount_point:
	sysfs_remove_mount_point(kernel_kobj, CSF_FS_TYPE);
out_slice:
	csf_slice_exit();
out_fpu:
	csf_fpu_exit();
	debugfs_remove(csf_debugfs);
	csf_thread_exit();
out_notifier:
	preempt_notifier_dec();
	return err;
}

/* Runs only once no thread is registered: each registered thread holds a module reference. */
static void __exit csf_exit(void)
{
	unregister_filesystem(&csf_fs_type);
	sysfs_remove_mount_point(kernel_kobj, CSF_FS_TYPE);
	csf_slice_exit();
	csf_fpu_exit();
	debugfs_remove(csf_debugfs);
	csf_thread_exit();
	preempt_notifier_dec();
}

module_init(csf_init);
module_exit(csf_exit);

MODULE_DESCRIPTION("Per-thread scheduler statistics and per-CPU times in read-only shared pages");
MODULE_AUTHOR("The coarse_stat_fs authors");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1.0");
