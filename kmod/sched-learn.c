// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: what the long-slice watch learns of the scheduler once, without kallsyms:
 * which scheduling class is which (opaque pointers), and where each CPU's runqueue keeps its
 * count of runnable tasks. Learning starts kthreads and runs a stopper briefly, so it happens
 * when the watch is first switched on, not at load.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/stop_machine.h>
#include <linux/tracepoint.h>
#include <uapi/linux/sched/types.h>

#include "csf.h"
#include "slice.h"

static const struct sched_class *csf_classes[CSF_NR_CLASSES];

u8 csf_class_of(const struct sched_class *c)
{
	int i;

	for (i = CSF_CLASS_STOP; i < CSF_NR_CLASSES; i++) {
		if (c == csf_classes[i])
			return i;
	}
	return CSF_CLASS_UNKNOWN;
}

struct csf_learn {
	struct completion done;
	const struct sched_class *fair, *rt, *dl;
	int cpu; /* for the runqueue: the CPU this kthread is bound to */
	void *rq;
	unsigned int seen; /* enqueues seen */
	unsigned int nr[2][2]; /* [enqueue][candidate offset]: the count read just after it */
};

/* Wait for kthread_stop(), so that no learning kthread runs module code after it. */
static int csf_learn_wait_stop(void)
{
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

static int csf_learn_park(struct csf_learn *l)
{
	complete(&l->done);
	return csf_learn_wait_stop();
}

/* A kthread reads its own class under each policy; deadline needs an unbound one. */
static int csf_learn_policies(void *arg)
{
	struct csf_learn *l = arg;
	struct sched_attr dl = {
		.size = sizeof(dl),
		.sched_policy = SCHED_DEADLINE,
		.sched_runtime = 100 * NSEC_PER_USEC,
		.sched_deadline = 100 * NSEC_PER_MSEC,
		.sched_period = 100 * NSEC_PER_MSEC,
	};

	sched_set_normal(current, 0);
	l->fair = current->sched_class;
	sched_set_fifo_low(current);
	l->rt = current->sched_class;
	if (!sched_setattr_nocheck(current, &dl))
		l->dl = current->sched_class;
	sched_set_normal(current, 0);
	return csf_learn_park(l);
}

static int csf_learn_stop(void *data)
{
	*(const struct sched_class **)data = current->sched_class;
	return 0;
}

static int csf_run_learner(int (*fn)(void *), struct csf_learn *l, int cpu)
{
	struct task_struct *k;

	init_completion(&l->done);
	k = kthread_create(fn, l, "csf_learn");
	if (IS_ERR(k))
		return PTR_ERR(k);
	if (cpu >= 0)
		kthread_bind(k, cpu);
	wake_up_process(k);
	wait_for_completion(&l->done);
	kthread_stop(k);
	return 0;
}

/*
 * The classes, as opaque pointers. idle is init_task's; stop is the class a stopper callback
 * runs in; fair, rt and deadline are a kthread's under each policy. The linker lays the classes
 * out in order, stop, dl, rt, fair, [ext,] idle, one struct sched_class apart (its size differs
 * between kernels): that places ext, and deadline where setting the policy failed (admission).
 */
static int csf_learn_classes(void)
{
	const struct sched_class *stop = NULL;
	struct csf_learn l = {};
	long size;
	int err;

	err = csf_run_learner(csf_learn_policies, &l, -1);
	if (err)
		return err;
	cpus_read_lock();
	err = stop_core_cpuslocked(cpumask_first(cpu_online_mask), csf_learn_stop, &stop);
	cpus_read_unlock();
	if (err)
		return err;

	csf_classes[CSF_CLASS_IDLE] = init_task.sched_class;
	csf_classes[CSF_CLASS_STOP] = stop;
	csf_classes[CSF_CLASS_RT] = l.rt;
	csf_classes[CSF_CLASS_FAIR] = l.fair;
	csf_classes[CSF_CLASS_DL] = l.dl;

	size = (const char *)l.fair - (const char *)l.rt;
	if (size > 0 && (const char *)l.rt - (const char *)stop == 2 * size) {
		const struct sched_class *dl = (const void *)((const char *)stop + size);

		if (l.dl && l.dl != dl)
			pr_warn("slice watch: the deadline class is not where the layout puts it\n");
		if (!l.dl)
			csf_classes[CSF_CLASS_DL] = dl;
	}
	if (size > 0 && (const char *)init_task.sched_class - (const char *)l.fair == 2 * size)
		csf_classes[CSF_CLASS_EXT] = (const void *)((const char *)l.fair + size);
	pr_info("slice watch: classes learned (deadline %s, ext %s)\n",
		l.dl			  ? "from a kthread" :
		csf_classes[CSF_CLASS_DL] ? "from the layout" :
					    "unknown",
		csf_classes[CSF_CLASS_EXT] ? "present" : "absent");
	return 0;
}

/* ---- Runnable tasks per CPU ---- */

/*
 * No kernel export counts a CPU's runnable tasks, so the watch reads the runqueue's own count.
 * struct rq is private, and kernels lay it out two ways: 6.1 to 6.12 start it with the lock
 * and then nr_running, 7.x with nr_running. A CPU's runqueue comes from the
 * sched_update_nr_running tracepoint, fired when a kthread bound to that CPU wakes two others
 * there, one after the other: at the right offset the count reads at least 2, then one more.
 * (At the wrong one, the lock reads the same while held, the field after the count does not
 * follow it.) Where exactly one offset passes, on every CPU, it is used; otherwise the count is
 * reported as unknown (-1). CPUs that come online later report -1 too. Each CPU gets a few
 * tries, since interrupts and other CPUs may change the count meanwhile.
 */
static const size_t csf_rq_offs[] = {
	0, /* 7.x: nr_running first, on the cache line the load balancer reads */
	ALIGN(sizeof(raw_spinlock_t), __alignof__(unsigned int)), /* 6.1 to 6.12: after __lock */
};

#define CSF_RQ_TRIES 5

static size_t csf_rq_off;
static int csf_rq_known; /* 1 known, -1 not recognized, 0 not learned yet */
static struct task_struct *csf_rq_waker;
static DEFINE_PER_CPU(void *, csf_rq); /* each CPU's runqueue, once learned */
static struct csf_learn *csf_rq_learn;

static unsigned int csf_rq_read(void *rq, size_t off)
{
	return READ_ONCE(*(unsigned int *)((char *)rq + off));
}

/* Two enqueues by the waker on its own CPU: the runqueue, and each candidate's count. */
static void csf_nr_running_probe(void *data, struct rq *rq, int change)
{
	struct csf_learn *l = READ_ONCE(csf_rq_learn);

	if (!in_task() || current != READ_ONCE(csf_rq_waker) || !l || change <= 0 || l->seen >= 2)
		return;
	if (!l->seen)
		l->rq = rq;
	else if (rq != l->rq)
		l->rq = NULL; /* not one runqueue: learn nothing */
	for (size_t c = 0; c < ARRAY_SIZE(csf_rq_offs); c++)
		l->nr[l->seen][c] = csf_rq_read(rq, csf_rq_offs[c]);
	l->seen++;
}

static int csf_learn_idle(void *arg)
{
	return csf_learn_wait_stop();
}

/* On l->cpu: wake two kthreads bound to the same CPU, so that the enqueues are this CPU's. */
static int csf_learn_rq(void *arg)
{
	struct csf_learn *l = arg;
	struct task_struct *w[2];
	int i;

	for (i = 0; i < 2; i++) {
		w[i] = kthread_create(csf_learn_idle, NULL, "csf_learn_w");
		if (IS_ERR(w[i]))
			break;
		kthread_bind(w[i], l->cpu);
	}
	if (i == 2) {
		/*
		 * With preemption off, the first woken kthread cannot run (wakeup preemption) and
		 * sleep again between the two enqueues; the probe ignores interrupts' wakeups.
		 */
		preempt_disable();
		WRITE_ONCE(csf_rq_learn, l);
		WRITE_ONCE(csf_rq_waker, current);
		wake_up_process(w[0]);
		wake_up_process(w[1]);
		WRITE_ONCE(csf_rq_waker, NULL);
		WRITE_ONCE(csf_rq_learn, NULL);
		preempt_enable();
	}
	while (i--)
		kthread_stop(w[i]);
	return csf_learn_park(l);
}

/* The offset the learned counts of l point to, or -1: at least 2, then one more. */
static int csf_rq_candidate(const struct csf_learn *l)
{
	int found = -1;

	if (l->seen != 2 || !l->rq)
		return -1;
	for (size_t c = 0; c < ARRAY_SIZE(csf_rq_offs); c++) {
		if (l->nr[0][c] < 2 || l->nr[0][c] > 1000000 || l->nr[1][c] != l->nr[0][c] + 1)
			continue;
		if (found >= 0)
			return -1; /* ambiguous */
		found = c;
	}
	return found;
}

static void csf_learn_runqueues(struct tracepoint *csf_nr_running_tp)
{
	int cpu, off = -1, known = 1;

	if (tracepoint_probe_register(csf_nr_running_tp, csf_nr_running_probe, NULL)) {
		csf_rq_known = -1;
		return;
	}
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct csf_learn l;
		int c = -1, try;

		/* Interrupts and other CPUs can still change the count in between: a few tries. */
		for (try = 0; try < CSF_RQ_TRIES && c < 0; try++) {
			l = (struct csf_learn){ .cpu = cpu };
			if (csf_run_learner(csf_learn_rq, &l, cpu))
				break;
			c = csf_rq_candidate(&l);
		}
		if (c < 0 || (off >= 0 && c != off)) {
			known = -1;
			break;
		}
		off = c;
		per_cpu(csf_rq, cpu) = l.rq;
	}
	cpus_read_unlock();
	tracepoint_probe_unregister(csf_nr_running_tp, csf_nr_running_probe, NULL);
	tracepoint_synchronize_unregister();
	if (off < 0)
		known = -1;
	else if (known > 0)
		csf_rq_off = csf_rq_offs[off];
	csf_rq_known = known;
	if (known < 0)
		pr_info("slice watch: runqueue layout not recognized; waiting tasks reported as -1\n");
}

s32 csf_nr_running(int cpu)
{
	void *rq = per_cpu(csf_rq, cpu);

	if (csf_rq_known <= 0 || !rq)
		return -1;
	return csf_rq_read(rq, csf_rq_off);
}

int csf_learn_sched(struct tracepoint *nr_running_tp)
{
	int err = csf_learn_classes();

	if (err)
		return err;
	csf_learn_runqueues(nr_running_tp);
	return 0;
}
