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
 * only: when the owner closes its last file, when it exits (the sched_process_exit tracepoint)
 * or when it execs a program that gains privileges (sched_process_exec). A last file closed by
 * another thread (after a hand-off) cannot touch the owner's notifier list, so it only parks
 * the object: the callbacks stop accounting, and the owner's next open resets the page and
 * resumes. At exit and at such an exec the page is ended: its last stretch closed and
 * CSF_THREAD_ENDED set, so that mappings that outlive the owner stop counting.
 *
 * The object is freed after an RCU grace period once the last reference goes: the probes that
 * may drop it run where PREEMPT_RT forbids freeing memory (a spinlock_t is a sleeping lock
 * there too, hence the raw spinlock). Mappings keep the page alive through their own page
 * references.
 *
 * Each object holds a module reference, so rmmod fails while any thread is registered.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/binfmts.h>
#include <linux/cred.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tracepoint.h>

#include "clock.h"
#include "compat.h"
#include "csf.h"

struct csf_thread {
	struct preempt_notifier pn;
	struct csf_thread_page *page;
	struct task_struct *owner; /* valid while registered: unregistered before the task dies */
	refcount_t ref;
	raw_spinlock_t lock; /* nfiles, registered, parked; taken where RT may not sleep */
	unsigned int nfiles;
	bool registered;
	bool parked; /* read locklessly by the callbacks */
	struct rcu_head rcu;
};

static struct preempt_ops csf_preempt_ops;
static struct tracepoint *csf_exit_tp, *csf_exec_tp;

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

static void csf_thread_free(struct rcu_head *rcu)
{
	struct csf_thread *t = container_of(rcu, struct csf_thread, rcu);

	put_page(virt_to_page(t->page));
	kfree(t);
	module_put(THIS_MODULE); /* csf_thread_exit() waits for this callback (rcu_barrier) */
}

/* Drop refs references: a release that also unregisters drops two at once. Any context. */
static void csf_thread_put(struct csf_thread *t, unsigned int refs)
{
	if (refcount_sub_and_test(refs, &t->ref))
		call_rcu(&t->rcu, csf_thread_free);
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
 * The TSC went back by more than CSF_TSC_STEP_NS: not skew between CPUs but a step (a reset at
 * resume, unsynchronized sockets). Waiting for the TSC to pass last_switch_tsc again could take
 * hours, so move the page's time origin back with it: the buckets keep their values and still
 * add up to last_switch_tsc - start_tsc; the time of the step itself is lost.
 */
static noinline void csf_resync(struct csf_thread_page *p, u64 now)
{
	p->start_tsc -= p->last_switch_tsc - now;
	p->last_switch_tsc = now;
	p->tsc_resyncs++;
}

/*
 * Close the stretch that began at last_switch_tsc. A TSC read on another CPU can be a little
 * behind the last one: then the stretch counts as empty, and last_switch_tsc stays, so that
 * the buckets always add up to last_switch_tsc - start_tsc. Far behind, it resynchronizes.
 */
static __always_inline u64 csf_stretch(struct csf_thread_page *p, u64 now)
{
	u64 last = p->last_switch_tsc;

	if (unlikely((s64)(now - last) <= 0)) {
		if (unlikely(last - now > csf_clock.step_cyc))
			csf_resync(p, now);
		return 0;
	}
	p->last_switch_tsc = now;
	return now - last;
}

#define CSF_PAGE_BODY offsetofend(struct csf_thread_page, seq)
/* The page's data: the struct, then the histograms. */
#define CSF_PAGE_DATA (CSF_THREAD_PAGE_SIZE + sizeof(struct csf_thread_hist))

static __always_inline struct csf_thread_hist *csf_hist(struct csf_thread_page *p)
{
	return (struct csf_thread_hist *)((u8 *)p + CSF_THREAD_PAGE_SIZE);
}

/* The log2 bucket of a stretch: [0] under 2 us, [k] from 2^k us, the last one open-ended. */
static __always_inline unsigned int csf_bucket(u64 cyc)
{
	u64 us = csf_cyc_to_us(cyc);

	return us < 2 ? 0 : min_t(unsigned int, fls64(us) - 1, CSF_HIST_BUCKETS - 1);
}

/* A stretch on the CPU has closed: the longest, its histogram, and whether it was too long. */
static __always_inline void csf_account_oncpu(struct csf_thread_page *p, u64 stretch)
{
	struct csf_thread_hist *h = csf_hist(p);
	u64 long_cyc = READ_ONCE(csf_slice_long_cyc);

	if (stretch > p->max_oncpu_cyc)
		p->max_oncpu_cyc = stretch;
	h->oncpu_us[csf_bucket(stretch)]++;
	if (unlikely(long_cyc && stretch > long_cyc)) {
		h->nr_long_oncpu++;
		h->long_threshold_us = READ_ONCE(slice_warn_us);
	}
}

/* The page for a thread starting (or restarting) accounting now. Preemption is off. */
static void csf_page_start(struct csf_thread_page *p, struct task_struct *tsk)
{
	u64 now = csf_counter_read();

	csf_write_begin(&p->seq);
	/* Everything after seq; through a byte pointer, as one range rather than one field. */
	memset((u8 *)p + CSF_PAGE_BODY, 0, CSF_PAGE_DATA - CSF_PAGE_BODY);
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
	u64 now = csf_counter_read(), stretch;
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
	stretch = csf_stretch(p, now);
	p->oncpu_cyc += stretch;
	csf_account_oncpu(p, stretch);
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
	u64 now = csf_counter_read();
	u64 off, wait;

	if (unlikely(READ_ONCE(t->parked))) {
		csf_page_mark_parked(p);
		return;
	}

	csf_write_begin(&p->seq);
	off = csf_stretch(p, now);
	wait = min(csf_ns_to_cyc(run_delay - p->run_delay_ns), off);
	p->runq_cyc += wait;
	csf_hist(p)->runq_us[csf_bucket(wait)]++;
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

/*
 * The owner, on its CPU with preemption off, stops accounting for good: close the stretch it is
 * running in (unless the page is parked, and so already stopped), and mark the page ended, so
 * that readers of a mapping that outlives this stop extrapolating.
 */
static void csf_page_end(struct csf_thread *t, struct task_struct *tsk)
{
	struct csf_thread_page *p = t->page;
	u64 now = csf_counter_read();

	csf_write_begin(&p->seq);
	if (!READ_ONCE(t->parked) && !(p->flags & CSF_THREAD_PARKED) && p->state < CSF_NR_STATES) {
		u64 stretch = csf_stretch(p, now);

		p->cyc[p->state] += stretch;
		if (p->state == CSF_ONCPU)
			csf_account_oncpu(p, stretch);
		csf_copy_counters(p, tsk);
	}
	p->state = CSF_STATE_ENDED;
	p->flags |= CSF_THREAD_ENDED;
	csf_write_end(&p->seq);
}

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
	csf_hdr_init(&t->page->hdr, CSF_KIND_THREAD, CSF_PAGE_DATA);
	t->owner = current;
	refcount_set(&t->ref, 2); /* the file and the registration */
	raw_spin_lock_init(&t->lock);
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
	/*
	 * Kernel threads have no user space to map the page into; io_uring and other user workers
	 * open files on behalf of a submitter, who would get the worker's page, not its own.
	 */
	if (current->flags & (PF_KTHREAD | PF_IO_WORKER | PF_USER_WORKER))
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
	raw_spin_lock(&t->lock);
	t->nfiles++;
	if (t->parked) {
		/* Back from a hand-off: start over; the callbacks see parked until cleared. */
		preempt_disable();
		csf_page_start(t->page, current); /* clears CSF_THREAD_PARKED too */
		WRITE_ONCE(t->parked, false);
		preempt_enable();
	}
	raw_spin_unlock(&t->lock);
	file->private_data = t;
	return 0;
}

static int csf_thread_release(struct inode *inode, struct file *file)
{
	struct csf_thread *t = file->private_data;
	bool unregister = false;

	raw_spin_lock(&t->lock);
	if (--t->nfiles == 0 && t->registered) {
		if (current == t->owner) {
			t->registered = false;
			unregister = true;
		} else {
			WRITE_ONCE(t->parked, true);
		}
	}
	raw_spin_unlock(&t->lock);

	if (unregister)
		csf_thread_unregister(t);
	csf_thread_put(t, unregister ? 2 : 1); /* the file's, and the registration's */
	return 0;
}

/*
 * Reads of the mapping by another process (ptrace, /proc/pid/mem): get_user_pages() refuses
 * VM_IO mappings, and the kernel then asks here. Writes are refused, as the mapping is.
 */
static int csf_thread_access(struct vm_area_struct *vma, unsigned long addr, void *buf, int len,
			     int write)
{
	struct csf_thread *t = vma->vm_private_data;
	unsigned long off = addr - vma->vm_start;

	if (write)
		return -EACCES;
	if (off >= PAGE_SIZE)
		return -EFAULT;
	len = min_t(unsigned long, len, PAGE_SIZE - off);
	memcpy(buf, (u8 *)t->page + off, len);
	return len;
}

static const struct vm_operations_struct csf_thread_vm_ops = {
	.access = csf_thread_access,
};

/*
 * Children never inherit the mapping: after fork() they have a thread of their own, and the
 * parent's page is the parent's business. VM_DONTCOPY alone could be undone by
 * madvise(MADV_DOFORK); the kernel refuses that for VM_IO mappings.
 */
static int csf_thread_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct csf_thread *t = file->private_data;
	int err = csf_mmap_check(vma, PAGE_SIZE);

	if (err)
		return err;
	vm_flags_set(vma, VM_DONTCOPY | VM_IO | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = t; /* the mapping holds the file, which holds t */
	vma->vm_ops = &csf_thread_vm_ops;
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
 * The owner stops for good (in its own context): end the page, unregister the object and drop
 * the registration's reference. The files that still point to it keep it until they are
 * closed; their release finds it unregistered. Runs in probes, which may not sleep (before 7.2
 * they run with preemption off), so: a raw spinlock, and the free deferred (csf_thread_put()).
 */
static void csf_thread_stop(struct task_struct *tsk)
{
	struct csf_thread *t = csf_thread_find(tsk);

	if (!t)
		return;
	raw_spin_lock(&t->lock);
	t->registered = false;
	raw_spin_unlock(&t->lock);
	preempt_disable(); /* no switch between ending the page and the notifier's removal */
	csf_page_end(t, tsk);
	preempt_notifier_unregister(&t->pn);
	preempt_enable();
	csf_thread_put(t, 1);
}

/* A thread exits, before its files are closed. */
static void csf_exit_probe(CSF_EXIT_PROBE_ARGS)
{
	csf_thread_stop(p);
}

/*
 * A thread has exec'ed a program, with the new credentials already in place. Accounting goes
 * on across an ordinary exec (the thread is the same), but not into a program that the
 * descriptors' holders may not watch: one that gained privileges (AT_SECURE: setuid, setgid,
 * file capabilities, an LSM transition), or one that the kernel makes non-dumpable (an
 * unreadable binary, or differing real and effective ids), as /proc/<pid>/io would refuse
 * them through ptrace_may_access(). The test mirrors begin_new_exec()'s.
 */
static void csf_exec_probe(void *data, struct task_struct *p, pid_t old_pid,
			   struct linux_binprm *bprm)
{
	const struct cred *cred = current_cred();

	if (bprm->secureexec || (bprm->interp_flags & BINPRM_FLAGS_ENFORCE_NONDUMP) ||
	    !uid_eq(cred->euid, cred->uid) || !gid_eq(cred->egid, cred->gid))
		csf_thread_stop(p);
}

struct csf_tp {
	const char *name;
	struct tracepoint **tp;
	void *probe;
};

static const struct csf_tp csf_tps[] = {
	{ "sched_process_exit", &csf_exit_tp, csf_exit_probe },
	{ "sched_process_exec", &csf_exec_tp, csf_exec_probe },
};

static void csf_find_tp(struct tracepoint *tp, void *priv)
{
	for (size_t i = 0; i < ARRAY_SIZE(csf_tps); i++) {
		if (!strcmp(tp->name, csf_tps[i].name))
			*csf_tps[i].tp = tp;
	}
}

int csf_thread_init(void)
{
	size_t i;
	int err = 0;

	/* The tracepoints are not exported by name; look them up among the kernel's. */
	for_each_kernel_tracepoint(csf_find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(csf_tps); i++) {
		if (!*csf_tps[i].tp) {
			pr_err("tracepoint %s not found\n", csf_tps[i].name);
			err = -ENOENT;
			break;
		}
		err = tracepoint_probe_register(*csf_tps[i].tp, csf_tps[i].probe, NULL);
		if (err) {
			pr_err("cannot attach to %s: %d\n", csf_tps[i].name, err);
			break;
		}
	}
	if (!err)
		return 0;
	while (i--)
		tracepoint_probe_unregister(*csf_tps[i].tp, csf_tps[i].probe, NULL);
	tracepoint_synchronize_unregister();
	return err;
}

void csf_thread_exit(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(csf_tps); i++)
		tracepoint_probe_unregister(*csf_tps[i].tp, csf_tps[i].probe, NULL);
	/* No probe may still run module code once the module is gone, */
	tracepoint_synchronize_unregister();
	/* nor an object's free (csf_thread_put()). */
	rcu_barrier();
}
