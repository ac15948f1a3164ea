// SPDX-License-Identifier: GPL-2.0
/*
 * csf_selftest: a test-only module that misbehaves on demand, so that the harness can show that
 * it catches a kernel warning (action=warn) and a panic (action=panic), and that sets the stage
 * for coarse_stat_fs's init failing late (action=occupy): it takes the mount point
 * /sys/kernel/coarse_stat_fs, so that coarse_stat_fs's init fails there, and counts through a
 * kprobe the calls of register_filesystem() for "coarse_stat_fs" meanwhile
 * (parameters/fs_registrations). A filesystem registered by an init that then fails can be
 * mounted while its module is freed. action=stopper runs a callback that spins stop_ms in
 * stopper context (stop class, interrupts off) on stop_cpu, for the long-slice watch's test.
 * action=kspin spins stop_ms in insmod's own context, preemption off and interrupts on, for
 * the watch's kernel stacks where no NMI takes them (arm64: the watch's timer interrupts it).
 * action=irqoff starts a kthread bound to irq_cpu that keeps interrupts off irq_ms at a time,
 * again and again, until the module is unloaded (tests/stress/t_hotplug_watch.c).
 *
 * For the debug kernel's checkers (tests/debian/selftest.sh debug), it also commits each kind of
 * bug they exist to catch: a use after free (action=uaf, KASAN), a leak (leak, kmemleak), two
 * locks taken in both orders (lockdep), a sleep with preemption off (sleep), a shift out of
 * bounds (ubsan), an entry added twice to a list (list) and a refcount dropped below zero
 * (refcount). Never load this module outside a throwaway guest.
 */
#include <linux/atomic.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/stop_machine.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/timekeeping.h>

static char *action = "none";
module_param(action, charp, 0444);
MODULE_PARM_DESC(action, "none|warn|panic|occupy|stopper|kspin|irqoff|a bug (see the source)");

static unsigned int stop_cpu = 1, stop_ms = 200, stop_n = 1;
module_param(stop_cpu, uint, 0444);
MODULE_PARM_DESC(stop_cpu, "stopper: the CPU to stop");
module_param(stop_ms, uint, 0444);
MODULE_PARM_DESC(stop_ms, "stopper, kspin: how long the callback (kspin: insmod) spins, ms");
module_param(stop_n, uint, 0444);
MODULE_PARM_DESC(stop_n, "stopper: how many times, one after the other (up to 1000)");

/* In the stopper of stop_cpu, interrupts off: hold the CPU like a slow stop_machine() user. */
static int csf_selftest_stopper(void *data)
{
	/* The clock, not mdelay(): delay loops calibrated under emulation can run short. */
	u64 end = ktime_get_mono_fast_ns() + (u64)stop_ms * NSEC_PER_MSEC;

	while (ktime_get_mono_fast_ns() < end)
		cpu_relax();
	return 0;
}

/* On insmod's CPU, preemption off, interrupts on: a kernel slice the watch's timer sees. */
static noinline void csf_selftest_kspin(void)
{
	u64 end = ktime_get_mono_fast_ns() + (u64)stop_ms * NSEC_PER_MSEC;

	preempt_disable();
	while (ktime_get_mono_fast_ns() < end)
		cpu_relax();
	preempt_enable();
}

static unsigned int irq_cpu, irq_ms = 4;
module_param(irq_cpu, uint, 0444);
MODULE_PARM_DESC(irq_cpu, "irqoff: the CPU whose interrupts go off");
module_param(irq_ms, uint, 0444);
MODULE_PARM_DESC(irq_ms, "irqoff: how long each time, ms");

static struct task_struct *irqoff_task;
static atomic_long_t irqoff_rounds = ATOMIC_LONG_INIT(0);

static int irqoff_rounds_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&irqoff_rounds));
}

static const struct kernel_param_ops irqoff_rounds_ops = { .get = irqoff_rounds_get };
module_param_cb(irqoff_rounds, &irqoff_rounds_ops, NULL, 0444);
MODULE_PARM_DESC(irqoff_rounds, "irqoff: how many times interrupts went off so far");

/* Bound to irq_cpu: interrupts off for irq_ms, on for as long as it takes to reschedule. */
static int csf_selftest_irqoff(void *data)
{
	while (!kthread_should_stop()) {
		u64 end;

		local_irq_disable();
		end = ktime_get_mono_fast_ns() + (u64)irq_ms * NSEC_PER_MSEC;
		while (ktime_get_mono_fast_ns() < end)
			cpu_relax();
		local_irq_enable();
		atomic_long_inc(&irqoff_rounds);
		cond_resched();
	}
	return 0;
}

/* A shift count the compiler cannot see: UBSAN checks it at run time. */
static int shift = 40;
module_param(shift, int, 0444);

static void *leaked;
static DEFINE_MUTEX(lock_a);
static DEFINE_MUTEX(lock_b);

/* The bugs, one per action; each returns whether it knew the action. */
static bool csf_selftest_bug(const char *what)
{
	if (!strcmp(what, "uaf")) {
		char *p = kmalloc(64, GFP_KERNEL);

		kfree(p);
		OPTIMIZER_HIDE_VAR(p); /* the compiler would see the bug too */
		pr_info("csf_selftest: read after free: %d\n", READ_ONCE(p[8]));
	} else if (!strcmp(what, "leak")) {
		WRITE_ONCE(leaked, kmalloc(128, GFP_KERNEL));
		WRITE_ONCE(leaked, NULL); /* the only reference, gone */
	} else if (!strcmp(what, "lockdep")) {
		mutex_lock(&lock_a);
		mutex_lock(&lock_b);
		mutex_unlock(&lock_b);
		mutex_unlock(&lock_a);
		mutex_lock(&lock_b);
		mutex_lock(&lock_a);
		mutex_unlock(&lock_a);
		mutex_unlock(&lock_b);
	} else if (!strcmp(what, "sleep")) {
		preempt_disable();
		might_sleep();
		preempt_enable();
	} else if (!strcmp(what, "ubsan")) {
		pr_info("csf_selftest: 1 << %d = %u\n", shift, 1u << shift);
	} else if (!strcmp(what, "list")) {
		static LIST_HEAD(head);
		static struct list_head entry;

		list_add(&entry, &head);
		list_add(&entry, &head);
	} else if (!strcmp(what, "refcount")) {
		refcount_t r = REFCOUNT_INIT(1);

		refcount_dec(&r);
		refcount_dec(&r);
	} else {
		return false;
	}
	return true;
}

static atomic_t fs_registrations = ATOMIC_INIT(0);
static int fs_registrations_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&fs_registrations));
}

static const struct kernel_param_ops fs_registrations_ops = { .get = fs_registrations_get };
module_param_cb(fs_registrations, &fs_registrations_ops, NULL, 0444);
MODULE_PARM_DESC(fs_registrations, "occupy: register_filesystem(coarse_stat_fs) calls seen");

/* register_filesystem(struct file_system_type *fs): the first argument (rdi, x0). */
static int csf_selftest_register_fs(struct kprobe *kp, struct pt_regs *regs)
{
	const struct file_system_type *fs =
		(const struct file_system_type *)regs_get_kernel_argument(regs, 0);

	if (fs && fs->name && !strcmp(fs->name, "coarse_stat_fs"))
		atomic_inc(&fs_registrations);
	return 0;
}

static struct kprobe csf_selftest_kp = {
	.symbol_name = "register_filesystem",
	.pre_handler = csf_selftest_register_fs,
};

static bool occupied;

static int __init csf_selftest_init(void)
{
	int err;

	if (!strcmp(action, "warn")) {
		WARN(1, "csf_selftest: warning on demand\n");
	} else if (!strcmp(action, "panic")) {
		panic("csf_selftest: panic on demand\n");
	} else if (!strcmp(action, "occupy")) {
		err = register_kprobe(&csf_selftest_kp);
		if (err)
			return err;
		err = sysfs_create_mount_point(kernel_kobj, "coarse_stat_fs");
		if (err) {
			unregister_kprobe(&csf_selftest_kp);
			return err;
		}
		occupied = true;
	} else if (!strcmp(action, "stopper")) {
		if (stop_ms > 5000 || stop_n > 1000)
			return -EINVAL;
		for (unsigned int i = 0; i < stop_n; i++) {
			cpus_read_lock();
			err = cpu_online(stop_cpu) ?
				      stop_core_cpuslocked(stop_cpu, csf_selftest_stopper, NULL) :
				      -ENODEV;
			cpus_read_unlock();
			if (err)
				return err;
		}
		return 0;
	} else if (!strcmp(action, "kspin")) {
		if (stop_ms > 5000)
			return -EINVAL;
		csf_selftest_kspin();
	} else if (!strcmp(action, "irqoff")) {
		if (irq_ms > 100 || irq_cpu >= nr_cpu_ids || !cpu_online(irq_cpu))
			return -EINVAL;
		irqoff_task = kthread_create(csf_selftest_irqoff, NULL, "csf_irqoff/%u", irq_cpu);
		if (IS_ERR(irqoff_task))
			return PTR_ERR(irqoff_task);
		kthread_bind(irqoff_task, irq_cpu);
		wake_up_process(irqoff_task);
	} else if (strcmp(action, "none") && !csf_selftest_bug(action)) {
		return -EINVAL;
	}
	return 0;
}

static void __exit csf_selftest_exit(void)
{
	if (irqoff_task)
		kthread_stop(irqoff_task);
	if (occupied) {
		sysfs_remove_mount_point(kernel_kobj, "coarse_stat_fs");
		unregister_kprobe(&csf_selftest_kp);
	}
}

module_init(csf_selftest_init);
module_exit(csf_selftest_exit);
MODULE_DESCRIPTION("coarse_stat_fs harness self-test: warns, panics or occupies on demand");
MODULE_LICENSE("GPL");
