// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: the cpu page (cpu).
 *
 * One page (or a few, for many CPUs) for the whole machine: a row per possible CPU and a sum
 * row, in ns, computed as /proc/stat computes its lines. A timer refreshes it every period_us
 * while anyone has the file open or mapped (a mapping keeps its file open); with no user there
 * is no timer and no page.
 *
 * The refresh builds the rows in a private copy, then copies them into the page under the
 * page's seqcount, so readers never spin for long. The first open builds the page before it
 * returns; later refreshes leave the rows of offline CPUs as they were.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/kernel_stat.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/tick.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "csf.h"

#define CSF_PERIOD_MIN_US 1000 /* 1 ms: more often would cost more than a /proc/stat read */
#define CSF_PERIOD_MAX_US 10000000 /* 10 s */
#define CSF_PERIOD_DEFAULT_US 10000 /* 10 ms: one USER_HZ tick of /proc/stat */

static unsigned int period_us = CSF_PERIOD_DEFAULT_US;

static struct {
	struct mutex lock; /* users, page, rows, the timer's state */
	unsigned int users; /* open files */
	struct csf_cpu_page *page; /* vmalloc_user(), mapped by users */
	struct csf_cpu_row *rows; /* the next rows, built outside the seqcount */
	struct hrtimer timer;
} csf_cpu = { .lock = __MUTEX_INITIALIZER(csf_cpu.lock) };

static ktime_t csf_period(void)
{
	return ns_to_ktime((u64)READ_ONCE(period_us) * NSEC_PER_USEC);
}

static unsigned int csf_cpu_nr_rows(void)
{
	return nr_cpu_ids + 1;
}

static size_t csf_cpu_data_size(void)
{
	return offsetof(struct csf_cpu_page, rows) + csf_cpu_nr_rows() * sizeof(struct csf_cpu_row);
}

loff_t csf_cpu_map_size(void)
{
	return PAGE_ALIGN(csf_cpu_data_size());
}

/* One CPU's times, as /proc/stat shows them (see csf_cpustat_fetch() in compat.h). */
static void csf_cpu_fill_row(struct csf_cpu_row *row, int cpu)
{
	struct kernel_cpustat kcs;
	u64 *st = kcs.cpustat;

	csf_cpustat_fetch(&kcs, cpu);
	row->user = st[CPUTIME_USER];
	row->nice = st[CPUTIME_NICE];
	row->system = st[CPUTIME_SYSTEM];
	row->idle = st[CPUTIME_IDLE];
	row->iowait = st[CPUTIME_IOWAIT];
	row->irq = st[CPUTIME_IRQ];
	row->softirq = st[CPUTIME_SOFTIRQ];
	row->steal = st[CPUTIME_STEAL];
	row->guest = st[CPUTIME_GUEST];
	row->guest_nice = st[CPUTIME_GUEST_NICE];
}

static void csf_cpu_add_row(struct csf_cpu_row *sum, const struct csf_cpu_row *row)
{
	sum->user += row->user;
	sum->nice += row->nice;
	sum->system += row->system;
	sum->idle += row->idle;
	sum->iowait += row->iowait;
	sum->irq += row->irq;
	sum->softirq += row->softirq;
	sum->steal += row->steal;
	sum->guest += row->guest;
	sum->guest_nice += row->guest_nice;
}

/*
 * Build the rows and publish them. The caller is the only writer: the first open (timer not yet
 * started) or the timer itself. all: also fill offline CPUs (the first time, they have no last
 * values to keep).
 */
static void csf_cpu_refresh(bool all)
{
	struct csf_cpu_page *page = csf_cpu.page;
	struct csf_cpu_row *rows = csf_cpu.rows, *sum = &rows[0];
	unsigned int cpu;

	memset(sum, 0, sizeof(*sum));
	sum->cpu = CSF_CPU_ALL;
	sum->online = 1;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct csf_cpu_row *row = &rows[1 + cpu];

		row->cpu = cpu;
		if (!cpu_possible(cpu))
			continue;
		row->online = cpu_online(cpu);
		if (row->online || all)
			csf_cpu_fill_row(row, cpu);
		csf_cpu_add_row(sum, row);
	}

	/*
	 * Readers spin while seq is odd: the writer must not be preempted in between. On
	 * PREEMPT_RT the soft timer runs in a preemptible thread, and a real-time reader woken on
	 * this CPU would otherwise spin over the writer it waits for.
	 */
	preempt_disable();
	csf_write_begin(&page->seq);
	memcpy(page->rows, rows, csf_cpu_nr_rows() * sizeof(*rows));
	page->update_mono_ns = ktime_get_ns();
	page->period_us = READ_ONCE(period_us);
	csf_write_end(&page->seq);
	preempt_enable();
}

static enum hrtimer_restart csf_cpu_tick(struct hrtimer *timer)
{
	csf_cpu_refresh(false);
	hrtimer_forward_now(timer, csf_period());
	return HRTIMER_RESTART;
}

/* First user: build the page and start the timer. Called with the lock held. */
static int csf_cpu_start(void)
{
	size_t rows_size = csf_cpu_nr_rows() * sizeof(struct csf_cpu_row);

	csf_cpu.page = vmalloc_user(csf_cpu_map_size());
	csf_cpu.rows = vzalloc(rows_size);
	if (!csf_cpu.page || !csf_cpu.rows) {
		vfree(csf_cpu.page);
		vfree(csf_cpu.rows);
		csf_cpu.page = NULL;
		csf_cpu.rows = NULL;
		return -ENOMEM;
	}
	csf_hdr_init(&csf_cpu.page->hdr, CSF_KIND_CPU, csf_cpu_data_size());
	csf_cpu.page->nr_rows = csf_cpu_nr_rows();
	csf_cpu.page->row_size = sizeof(struct csf_cpu_row);
	csf_cpu_refresh(true);
	hrtimer_start(&csf_cpu.timer, csf_period(), HRTIMER_MODE_REL_SOFT);
	return 0;
}

/* Last user gone (its mappings too): stop the timer and free the page. Lock held. */
static void csf_cpu_stop(void)
{
	hrtimer_cancel(&csf_cpu.timer);
	vfree(csf_cpu.page);
	vfree(csf_cpu.rows);
	csf_cpu.page = NULL;
	csf_cpu.rows = NULL;
}

static int csf_cpu_open(struct inode *inode, struct file *file)
{
	int err = 0;

	if (file->f_mode & FMODE_WRITE)
		return -EACCES;

	mutex_lock(&csf_cpu.lock);
	if (!csf_cpu.users)
		err = csf_cpu_start();
	if (!err)
		csf_cpu.users++;
	mutex_unlock(&csf_cpu.lock);
	return err;
}

static int csf_cpu_release(struct inode *inode, struct file *file)
{
	mutex_lock(&csf_cpu.lock);
	if (!--csf_cpu.users)
		csf_cpu_stop();
	mutex_unlock(&csf_cpu.lock);
	return 0;
}

/* As for thread-self, but children may inherit it: it holds nothing of the parent's. */
static int csf_cpu_mmap(struct file *file, struct vm_area_struct *vma)
{
	int err = csf_mmap_check(vma, csf_cpu_map_size());

	if (err)
		return err;
	/* The file is open, so the page exists until the mapping (holding the file) goes. */
	return remap_vmalloc_range(vma, csf_cpu.page, 0);
}

const struct file_operations csf_cpu_fops = {
	.owner = THIS_MODULE,
	.open = csf_cpu_open,
	.release = csf_cpu_release,
	.mmap = csf_cpu_mmap,
	.llseek = noop_llseek,
};

/* period_us: bounded; a change takes effect at once for a running timer. */
static int csf_period_set(const char *val, const struct kernel_param *kp)
{
	unsigned int us;
	int err = kstrtouint(val, 0, &us);

	if (err)
		return err;
	if (us < CSF_PERIOD_MIN_US || us > CSF_PERIOD_MAX_US)
		return -EINVAL;
	WRITE_ONCE(period_us, us);

	/* Restart a running timer with the new period; cancel first: its callback forwards it. */
	mutex_lock(&csf_cpu.lock);
	if (csf_cpu.users) {
		hrtimer_cancel(&csf_cpu.timer);
		hrtimer_start(&csf_cpu.timer, csf_period(), HRTIMER_MODE_REL_SOFT);
	}
	mutex_unlock(&csf_cpu.lock);
	return 0;
}

static const struct kernel_param_ops csf_period_ops = {
	.set = csf_period_set,
	.get = param_get_uint,
};

module_param_cb(period_us, &csf_period_ops, &period_us, 0644);
MODULE_PARM_DESC(period_us, "cpu page refresh period, us (1000 to 10000000, default 10000)");

/* Nothing to undo at exit: every file holds a module reference, so no timer outlives them. */
void csf_cpu_init(void)
{
	csf_hrtimer_setup(&csf_cpu.timer, csf_cpu_tick, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
}
