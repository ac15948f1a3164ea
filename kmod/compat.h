/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coarse_stat_fs: fallbacks for older kernels, back to 6.1.
 *
 * Each CSF_HAVE_* comes from a feature test in kmod/Kbuild, which greps the headers being built
 * against: distributions backport, so a version number would lie. Each fallback names the
 * release that brought the interface it stands in for.
 */
#ifndef CSF_COMPAT_H
#define CSF_COMPAT_H

#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/mm.h>

/* inode_operations.setattr takes a struct mnt_idmap since 6.3; a user_namespace before. */
#ifdef CSF_HAVE_MNT_IDMAP
typedef struct mnt_idmap csf_idmap_t;
#else
typedef struct user_namespace csf_idmap_t;
#endif

/* simple_inode_init_ts() came with 6.7, when inode timestamps got accessors. */
#ifdef CSF_HAVE_SIMPLE_INODE_INIT_TS
#define csf_inode_init_ts simple_inode_init_ts
#else
static inline void csf_inode_init_ts(struct inode *inode)
{
	inode->i_atime = inode->i_mtime = inode->i_ctime = current_time(inode);
}
#endif

/*
 * Dentries that stay until unmount: d_make_persistent() and kill_anon_super() replaced d_add()
 * with a held reference and kill_litter_super() in 7.x (first in Debian's 7.2).
 */
#ifdef CSF_HAVE_D_MAKE_PERSISTENT
static inline void csf_d_add_persistent(struct dentry *dentry, struct inode *inode)
{
	d_make_persistent(dentry, inode);
	dput(dentry);
}
#define csf_kill_sb kill_anon_super
#else
static inline void csf_d_add_persistent(struct dentry *dentry, struct inode *inode)
{
	d_add(dentry, inode); /* keeps d_alloc_name()'s reference, dropped by kill_litter_super() */
}
#define csf_kill_sb kill_litter_super
#endif

/* vm_flags_set() and vm_flags_clear() came with 6.3; before, vm_flags was written directly. */
#ifndef CSF_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, unsigned long flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma, unsigned long flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/* The sched_process_exit tracepoint gained a group_dead argument in 7.2. */
#ifdef CSF_HAVE_EXIT_GROUP_DEAD
#define CSF_EXIT_PROBE_ARGS void *data, struct task_struct *p, bool group_dead
#else
#define CSF_EXIT_PROBE_ARGS void *data, struct task_struct *p
#endif

#endif /* CSF_COMPAT_H */
