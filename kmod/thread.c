// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: per-thread pages (thread-self).
 *
 * A thread that opens thread-self gets one object: a page and a preempt notifier registered on
 * the thread. All of the thread's descriptors share it; it is found again through the thread's
 * own notifier list. The notifier's callbacks run only in the owner's context (sched_out with
 * the owner as prev, sched_in with the owner as next), as do registration, reset and removal.
 * So the page has a single writer, the owner, always with preemption off; the seqcount in the
 * page serves readers only.
 *
 * References: one per open file, one while registered. The object is unregistered by its owner
 * only: when the owner closes its last file, or when it exits (the sched_process_exit
 * tracepoint). A last file closed by another thread (after a hand-off) cannot touch the
 * owner's notifier list, so it only parks the object: the callbacks stop accounting, and the
 * owner's next open resets the page and resumes. The object is freed when the last reference
 * goes; mappings keep the page itself alive through their own page references.
 *
 * Each object holds a module reference, so rmmod fails while any thread is registered.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tracepoint.h>
#include <asm/tsc.h>

#include "compat.h"
#include "csf.h"

struct csf_thread {
	struct preempt_notifier pn;
	struct csf_thread_page *page;
	struct task_struct *owner; /* valid while registered: unregistered before the task dies */
	refcount_t ref;
	spinlock_t lock; /* nfiles, registered, parked */
	unsigned int nfiles;
	bool registered;
	bool parked; /* read locklessly by the callbacks */
};

static struct preempt_ops csf_preempt_ops;
static struct tracepoint *csf_exit_tp;

/* The calling thread's object, if it has one; only the caller changes its notifier list. */
static struct csf_thread *csf_thread_find(struct task_struct *tsk)
{
	struct preempt_notifier *pn;

	hlist_for_each_entry(pn, &tsk->preempt_notifiers, link) {
		if (pn->ops == &csf_preempt_ops)
			return container_of(pn, struct csf_thread, pn);
	}
	return NULL;
}

/* Drop refs references: a release that also unregisters drops two at once. */
static void csf_thread_put(struct csf_thread *t, unsigned int refs)
{
	if (!refcount_sub_and_test(refs, &t->ref))
		return;
	put_page(virt_to_page(t->page));
	kfree(t);
	module_put(THIS_MODULE);
}

static __always_inline u64 csf_ns_to_cyc(u64 ns)
{
	return mul_u64_u32_shr(ns, csf_clock.ns2cyc_mult, csf_clock.ns2cyc_shift);
}

/* The counters copied at switch-out, as /proc/<tid>/{stat,io,schedstat} report them. */
static __always_inline void csf_copy_counters(struct csf_thread_page *p, struct task_struct *tsk)
{
	p->nr_preempt = tsk->nivcsw;
	p->nr_block = tsk->nvcsw;
	p->min_flt = tsk->min_flt;
	p->maj_flt = tsk->maj_flt;
#ifdef CONFIG_TASK_XACCT
	p->syscr = tsk->ioac.syscr;
	p->syscw = tsk->ioac.syscw;
	p->rchar = tsk->ioac.rchar;
	p->wchar = tsk->ioac.wchar;
#endif
#ifdef CONFIG_TASK_IO_ACCOUNTING
	p->read_bytes = tsk->ioac.read_bytes;
	p->write_bytes = tsk->ioac.write_bytes;
#endif
	p->sum_exec_ns = tsk->se.sum_exec_runtime;
}

/*
 * Close the stretch that began at last_switch_tsc. A TSC read on another CPU can be behind the
 * last one: then the stretch counts as empty, and last_switch_tsc stays, so that the buckets
 * always add up to last_switch_tsc - start_tsc.
 */
static __always_inline u64 csf_stretch(struct csf_thread_page *p, u64 now)
{
	u64 last = p->last_switch_tsc;

	if (unlikely((s64)(now - last) <= 0))
		return 0;
	p->last_switch_tsc = now;
	return now - last;
}

#define CSF_PAGE_BODY offsetofend(struct csf_thread_page, seq)

/* The page for a thread starting (or restarting) accounting now. Preemption is off. */
static void csf_page_start(struct csf_thread_page *p, struct task_struct *tsk)
{
	u64 now = rdtsc_ordered();

	csf_write_begin(&p->seq);
	/* Everything after seq; through a byte pointer, as one range rather than one field. */
	memset((u8 *)p + CSF_PAGE_BODY, 0, sizeof(*p) - CSF_PAGE_BODY);
	p->state = CSF_ONCPU;
	p->start_tsc = now;
	p->last_switch_tsc = now;
	csf_copy_counters(p, tsk);
	p->run_delay_ns = tsk->sched_info.run_delay;
	p->cpu = smp_processor_id();
	p->tid = task_pid_nr(tsk);
	csf_write_end(&p->seq);
}

/* A parked object's callbacks only say so in the page, once, and then do nothing. */
static void csf_page_mark_parked(struct csf_thread_page *p)
{
	if (p->flags & CSF_THREAD_PARKED)
		return;
	csf_write_begin(&p->seq);
	p->flags |= CSF_THREAD_PARKED;
	csf_write_end(&p->seq);
}

/*
 * The owner leaves the CPU: rq lock held, interrupts off. Close the on-CPU stretch and choose the
 * bucket for the time off the CPU. __schedule() has already counted the switch: nvcsw moved if
 * the thread blocked, nivcsw if it was preempted (or yielded, still runnable). The sleep kind
 * comes from what __schedule() itself recorded for this switch (in_iowait, and
 * sched_contributes_to_load for D state that is not TASK_IDLE); __state could already have
 * been changed by a concurrent wakeup.
 */
static void csf_sched_out(struct preempt_notifier *pn, struct task_struct *next)
{
	struct csf_thread *t = container_of(pn, struct csf_thread, pn);
	struct csf_thread_page *p = t->page;
	struct task_struct *tsk = current;
	u64 now = rdtsc_ordered();
	u32 state;

	if (unlikely(READ_ONCE(t->parked))) {
		csf_page_mark_parked(p);
		return;
	}

	if (tsk->nvcsw == p->nr_block)
		state = CSF_RUNQ;
	else if (tsk->in_iowait)
		state = CSF_IOWAIT;
	else if (tsk->sched_contributes_to_load)
		state = CSF_DSLEEP;
	else
		state = CSF_SLEEP;

	csf_write_begin(&p->seq);
	p->oncpu_cyc += csf_stretch(p, now);
	p->state = state;
	csf_copy_counters(p, tsk);
	csf_write_end(&p->seq);
}

/*
 * The owner is back on a CPU: interrupts on, preemption off. Split the time off the CPU: what
 * sched_info counted as runqueue wait since the switch-out goes to runq_cyc (at most the whole
 * stretch), the rest to the bucket chosen at switch-out.
 */
static void csf_sched_in(struct preempt_notifier *pn, int cpu)
{
	struct csf_thread *t = container_of(pn, struct csf_thread, pn);
	struct csf_thread_page *p = t->page;
	u64 run_delay = current->sched_info.run_delay;
	u64 now = rdtsc_ordered();
	u64 off, wait;

	if (unlikely(READ_ONCE(t->parked))) {
		csf_page_mark_parked(p);
		return;
	}

	csf_write_begin(&p->seq);
	off = csf_stretch(p, now);
	wait = min(csf_ns_to_cyc(run_delay - p->run_delay_ns), off);
	p->runq_cyc += wait;
	p->cyc[p->state] += off - wait;
	p->state = CSF_ONCPU;
	p->run_delay_ns = run_delay;
	if (p->cpu != cpu) {
		p->nr_migrate++;
		p->cpu = cpu;
	}
	csf_write_end(&p->seq);
}

static struct preempt_ops csf_preempt_ops = {
	.sched_in = csf_sched_in,
	.sched_out = csf_sched_out,
};

/* Remove the owner's notifier; only the owner may (see the top of the file). */
static void csf_thread_unregister(struct csf_thread *t)
{
	preempt_disable(); /* as KVM does: no switch while the list changes */
	preempt_notifier_unregister(&t->pn);
	preempt_enable();
}

static struct csf_thread *csf_thread_new(void)
{
	struct csf_thread *t;
	struct page *page;

	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		return NULL;
	/* Charged to the opener's memory cgroup, like the rest of its memory. */
	page = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!page) {
		kfree(t);
		return NULL;
	}
	t->page = page_address(page);
	csf_hdr_init(&t->page->hdr, CSF_KIND_THREAD, sizeof(struct csf_thread_page));
	t->owner = current;
	refcount_set(&t->ref, 2); /* the file and the registration */
	spin_lock_init(&t->lock);
	t->nfiles = 1;
	t->registered = true;
	preempt_notifier_init(&t->pn, &csf_preempt_ops);
	__module_get(THIS_MODULE); /* the open file holds one, so this cannot fail */

	preempt_disable(); /* no switch between starting the page and watching switches */
	csf_page_start(t->page, current);
	preempt_notifier_register(&t->pn);
	preempt_enable();
	return t;
}

static int csf_thread_open(struct inode *inode, struct file *file)
{
	struct csf_thread *t;

	/* Root may open a 0444 file for writing; nobody may write this one. */
	if (file->f_mode & FMODE_WRITE)
		return -EACCES;
	/* Kernel threads have no user space to map the page into. */
	if (current->flags & PF_KTHREAD)
		return -EINVAL;

	t = csf_thread_find(current);
	if (!t) {
		t = csf_thread_new();
		if (!t)
			return -ENOMEM;
		file->private_data = t;
		return 0;
	}

	refcount_inc(&t->ref);
	spin_lock(&t->lock);
	t->nfiles++;
	if (t->parked) {
		/* Back from a hand-off: start over; the callbacks see parked until cleared. */
		preempt_disable();
		csf_page_start(t->page, current); /* clears CSF_THREAD_PARKED too */
		WRITE_ONCE(t->parked, false);
		preempt_enable();
	}
	spin_unlock(&t->lock);
	file->private_data = t;
	return 0;
}

static int csf_thread_release(struct inode *inode, struct file *file)
{
	struct csf_thread *t = file->private_data;
	bool unregister = false;

	spin_lock(&t->lock);
	if (--t->nfiles == 0 && t->registered) {
		if (current == t->owner) {
			t->registered = false;
			unregister = true;
		} else {
			WRITE_ONCE(t->parked, true);
		}
	}
	spin_unlock(&t->lock);

	if (unregister)
		csf_thread_unregister(t);
	csf_thread_put(t, unregister ? 2 : 1); /* the file's, and the registration's */
	return 0;
}

/* Children do not inherit the mapping: after fork() they have a thread of their own. */
static int csf_thread_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct csf_thread *t = file->private_data;
	int err = csf_mmap_check(vma, PAGE_SIZE);

	if (err)
		return err;
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	return vm_insert_page(vma, vma->vm_start, virt_to_page(t->page));
}

const struct file_operations csf_thread_fops = {
	.owner = THIS_MODULE,
	.open = csf_thread_open,
	.release = csf_thread_release,
	.mmap = csf_thread_mmap,
	.llseek = noop_llseek,
};

/*
 * A thread exits (in its own context, before its files are closed): unregister its object. The
 * files that still point to it keep it until they are closed; their release finds it
 * unregistered.
 */
static void csf_exit_probe(CSF_EXIT_PROBE_ARGS)
{
	struct csf_thread *t = csf_thread_find(p);

	if (!t)
		return;
	spin_lock(&t->lock);
	t->registered = false;
	spin_unlock(&t->lock);
	csf_thread_unregister(t);
	csf_thread_put(t, 1);
}

static void csf_find_exit_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_process_exit"))
		*(struct tracepoint **)priv = tp;
}

int csf_thread_init(void)
{
	int err;

	/* The tracepoint is not exported by name; look it up among the kernel's. */
	for_each_kernel_tracepoint(csf_find_exit_tp, &csf_exit_tp);
	if (!csf_exit_tp) {
		pr_err("tracepoint sched_process_exit not found\n");
		return -ENOENT;
	}
	err = tracepoint_probe_register(csf_exit_tp, csf_exit_probe, NULL);
	if (err)
		pr_err("cannot attach to sched_process_exit: %d\n", err);
	return err;
}

void csf_thread_exit(void)
{
	tracepoint_probe_unregister(csf_exit_tp, csf_exit_probe, NULL);
	/* No probe may still run module code once the module is gone. */
	tracepoint_synchronize_unregister();
}
