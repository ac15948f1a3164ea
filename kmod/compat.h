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
#include <linux/hrtimer.h>
#include <linux/kernel_stat.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/tick.h>
#include <asm/processor.h>

/* inode_operations.setattr takes a struct mnt_idmap since 6.3; a user_namespace before. */
#ifdef CSF_HAVE_MNT_IDMAP
#define csf_idmap mnt_idmap
#else
#define csf_idmap user_namespace
#endif

/* simple_inode_init_ts() came with 6.7, when inode timestamps got accessors. */
#ifdef CSF_HAVE_SIMPLE_INODE_INIT_TS
#define csf_inode_init_ts simple_inode_init_ts
#else
static inline void csf_inode_init_ts(struct inode *inode)
{
	struct timespec64 now = current_time(inode);

	inode->i_atime = now;
	inode->i_mtime = now;
	inode->i_ctime = now;
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

/* PF_USER_WORKER (threads such as vhost's, cloned from a user thread) came with 6.4. */
#ifndef PF_USER_WORKER
#define PF_USER_WORKER 0
#endif

/* The sched_process_exit tracepoint gained a group_dead argument in 7.2. */
#ifdef CSF_HAVE_EXIT_GROUP_DEAD
#define CSF_EXIT_PROBE_ARGS void *data, struct task_struct *p, bool group_dead
#else
#define CSF_EXIT_PROBE_ARGS void *data, struct task_struct *p
#endif

/*
 * A CPU's times with idle and iowait as /proc/stat shows them. Since 7.2, kcpustat_cpu_fetch()
 * includes NOHZ idle time itself (kcpustat_field_idle()) and /proc/stat uses just that. Before,
 * /proc/stat took the idle and iowait of an online CPU from the tick-sched counters
 * (get_cpu_idle_time_us(), which returns -1 when NOHZ is off) and of an offline one from
 * kernel_cpustat.
 */
#ifdef CSF_HAVE_KCPUSTAT_FIELD_IDLE
static inline void csf_cpustat_fetch(struct kernel_cpustat *kcs, int cpu)
{
	kcpustat_cpu_fetch(kcs, cpu);
}
#else
static inline void csf_cpustat_fetch(struct kernel_cpustat *kcs, int cpu)
{
	u64 idle = -1ULL, iowait = -1ULL;

	kcpustat_cpu_fetch(kcs, cpu);
	if (cpu_online(cpu)) {
		idle = get_cpu_idle_time_us(cpu, NULL); /* NULL: read only, update nothing */
		iowait = get_cpu_iowait_time_us(cpu, NULL);
	}
	if (idle != -1ULL)
		kcs->cpustat[CPUTIME_IDLE] = idle * NSEC_PER_USEC;
	if (iowait != -1ULL)
		kcs->cpustat[CPUTIME_IOWAIT] = iowait * NSEC_PER_USEC;
}
#endif

/* hrtimer_setup() came with 6.13; before, hrtimer_init() and setting the function. */
#ifdef CSF_HAVE_HRTIMER_SETUP
#define csf_hrtimer_setup hrtimer_setup
#else
static inline void csf_hrtimer_setup(struct hrtimer *timer,
				     enum hrtimer_restart (*fn)(struct hrtimer *), clockid_t clock,
				     enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
}
#endif

#ifdef CONFIG_X86_64
/*
 * A task's struct fpu: since 6.16 it follows the task_struct, and x86_task_fpu(), which says
 * so, is out of line and not exported where X86_DEBUG_FPU is set (Debian). Before, it was
 * thread_struct's last member.
 */
static inline struct fpu *csf_task_fpu(struct task_struct *task)
{
#ifdef CSF_HAVE_FPU_AFTER_TASK
	return (struct fpu *)((void *)task + sizeof(*task));
#else
	return &task->thread.fpu;
#endif
}
#endif

#endif /* CSF_COMPAT_H */
