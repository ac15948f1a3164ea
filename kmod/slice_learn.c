// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: what the long-slice watch learns of the scheduler, without kallsyms and
 * without changing any task: which scheduling class is which (opaque pointers), and where each
 * CPU's runqueue keeps its count of runnable tasks.
 *
 * Classes, once, when the watch is first switched on. stop is the class a stopper callback runs
 * in, idle is init_task's (CPU 0's idle task), fair is the kworkers' (each online CPU's runs a
 * work item). The linker lays the classes out in order, stop, dl, rt, fair, [ext,] idle, one
 * struct sched_class apart (since 6.0; the struct's size differs between kernels, and BTF says
 * it where the kernel has BTF): that places deadline, rt and ext. Where what was seen does not
 * fit that layout, only stop and idle are named, and the other classes are reported as unknown.
 * No task's policy is ever changed to learn any of it: a task that left SCHED_DEADLINE arms its
 * inactive timer, which divides by the root domain's CPUs when it fires during a CPU's
 * hotplug (a divide error in inactive_task_timer() on 6.1 and 6.12).
 *
 * The count: struct rq is private. Its members' offsets come from BTF, the kernel's own
 * description of its types (/sys/kernel/btf/vmlinux, btf.c), and each CPU's runqueue from the
 * sched_update_nr_running tracepoint, which hands over the runqueue at each enqueue and dequeue:
 * rq->cpu says whose it is. The probe is registered only while an online CPU's runqueue is
 * unknown (switching the watch on, a CPU coming online), and each such CPU is poked with a work
 * item so that it enqueues something. Runqueues never move, so what is learned stays. Without
 * BTF, or for a CPU not seen yet, the count is reported as -1, never guessed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/stop_machine.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "btf.h"
#include "csf.h"
#include "slice.h"

static const struct sched_class *csf_classes[CSF_NR_CLASSES];

u8 csf_class_of(const struct sched_class *c)
{
	int i;

	for (i = CSF_CLASS_STOP; i < CSF_NR_CLASSES; i++) {
		if (c && c == csf_classes[i])
			return i;
	}
	return CSF_CLASS_UNKNOWN;
}

/* A work item for each CPU: its kworker runs in fair, and waking it is an enqueue there. */
struct csf_poke {
	struct work_struct work;
	const struct sched_class *class; /* the class of the kworker that ran it last */
};

static DEFINE_PER_CPU(struct csf_poke, csf_pokes);

static void csf_poke_fn(struct work_struct *work)
{
	struct csf_poke *p = container_of(work, struct csf_poke, work);

	WRITE_ONCE(p->class, current->sched_class);
}

static void csf_pokes_flush(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		flush_work(&per_cpu_ptr(&csf_pokes, cpu)->work);
}

/* ---- Classes ---- */

static int csf_learn_stop(void *data)
{
	*(const struct sched_class **)data = current->sched_class;
	return 0;
}

/* The kworkers' class, if every online CPU's agrees; else NULL. */
static const struct sched_class *csf_learn_fair(void)
{
	const struct sched_class *fair = NULL, *c;
	int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		WRITE_ONCE(per_cpu_ptr(&csf_pokes, cpu)->class, NULL);
		schedule_work_on(cpu, &per_cpu_ptr(&csf_pokes, cpu)->work);
	}
	cpus_read_unlock();
	csf_pokes_flush();
	for_each_possible_cpu(cpu) {
		c = READ_ONCE(per_cpu_ptr(&csf_pokes, cpu)->class);
		if (!c)
			continue;
		if (fair && c != fair)
			return NULL;
		fair = c;
	}
	return fair;
}

/*
 * Name the classes from stop, fair and idle and the layout, if they fit it: fair three strides
 * after stop, idle one stride after fair (no ext) or two (ext between them), a stride being
 * sizeof(struct sched_class), BTF's figure where there is one. Else only stop and idle.
 */
static void csf_place_classes(const struct sched_class *stop, const struct sched_class *fair,
			      const struct sched_class *idle, u32 btf_size)
{
	unsigned long s = (unsigned long)stop, f = (unsigned long)fair, i = (unsigned long)idle;
	unsigned long stride = 0, after_fair = 0;
	const char *why = NULL;

	csf_classes[CSF_CLASS_STOP] = stop;
	csf_classes[CSF_CLASS_IDLE] = idle;
	if (fair && f > s && !((f - s) % 3))
		stride = (f - s) / 3;
	if (stride && i > f && !((i - f) % stride))
		after_fair = (i - f) / stride;
	if (!fair)
		why = "the kworkers' classes differ";
	else if (!stride)
		why = "fair is not three classes after stop";
	else if (stride < 8 * sizeof(void *) || stride % sizeof(void *))
		why = "not a struct's size apart";
	else if (btf_size && stride != btf_size)
		why = "not one struct sched_class apart, as BTF gives its size";
	else if (after_fair != 1 && after_fair != 2)
		why = "idle is not one or two classes after fair";
	if (why) {
		pr_info("slice watch: scheduling classes not laid out as expected (%s): naming only stop and idle\n",
			why);
		return;
	}
	csf_classes[CSF_CLASS_DL] = (const void *)(s + stride);
	csf_classes[CSF_CLASS_RT] = (const void *)(s + 2 * stride);
	csf_classes[CSF_CLASS_FAIR] = fair;
	if (after_fair == 2)
		csf_classes[CSF_CLASS_EXT] = (const void *)(f + stride);
	pr_info("slice watch: classes learned, %lu bytes apart (%s), ext %s\n", stride,
		btf_size ? "as BTF says" : "no BTF", after_fair == 2 ? "present" : "absent");
}

/* ---- Runnable tasks per CPU ---- */

static int csf_rq_nr_off = -1, csf_rq_cpu_off = -1; /* in struct rq, from BTF; -1 unknown */
static DEFINE_PER_CPU(void *, csf_rq); /* each CPU's runqueue, once seen */
static struct tracepoint *csf_rq_tp;

static DEFINE_MUTEX(csf_rq_lock); /* csf_rq_active, csf_rq_probing, csf_rq_backoff_ms */
static bool csf_rq_active; /* the watch is on */
static bool csf_rq_probing; /* csf_rq_probe is registered */
static unsigned int csf_rq_backoff_ms;
static void csf_rq_sync(struct work_struct *work);
static DECLARE_DELAYED_WORK(csf_rq_work, csf_rq_sync);

/* Every enqueue and dequeue while an online CPU's runqueue is unknown; rq lock held. */
static void csf_rq_probe(void *data, struct rq *rq, int change)
{
	int cpu = READ_ONCE(*(int *)((char *)rq + csf_rq_cpu_off));

	if (cpu < 0 || cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return;
	if (!READ_ONCE(per_cpu(csf_rq, cpu)))
		WRITE_ONCE(per_cpu(csf_rq, cpu), (void *)rq);
}

/* With csf_rq_lock: probe and poke while an online CPU's runqueue is unknown, else stop. */
static void csf_rq_update(void)
{
	bool missing = false;
	int cpu;

	for_each_online_cpu(cpu)
		missing |= !READ_ONCE(per_cpu(csf_rq, cpu));
	if (!missing) {
		if (csf_rq_probing) {
			tracepoint_probe_unregister(csf_rq_tp, csf_rq_probe, NULL);
			tracepoint_synchronize_unregister();
			csf_rq_probing = false;
		}
		csf_rq_backoff_ms = 0;
		return;
	}
	if (!csf_rq_probing)
		csf_rq_probing = !tracepoint_probe_register(csf_rq_tp, csf_rq_probe, NULL);
	if (!csf_rq_probing)
		return;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		if (!READ_ONCE(per_cpu(csf_rq, cpu)))
			schedule_work_on(cpu, &per_cpu_ptr(&csf_pokes, cpu)->work);
	}
	cpus_read_unlock();
	/* Look again soon, then less and less often (a CPU that nothing wakes at all). */
	csf_rq_backoff_ms = clamp(csf_rq_backoff_ms * 2, 10U, 10000U);
	schedule_delayed_work(&csf_rq_work, msecs_to_jiffies(csf_rq_backoff_ms));
}

static void csf_rq_sync(struct work_struct *work)
{
	mutex_lock(&csf_rq_lock);
	if (csf_rq_active)
		csf_rq_update();
	mutex_unlock(&csf_rq_lock);
}

void csf_rq_start(void)
{
	if (csf_rq_nr_off < 0 || csf_rq_cpu_off < 0)
		return;
	mutex_lock(&csf_rq_lock);
	WRITE_ONCE(csf_rq_active, true);
	csf_rq_backoff_ms = 0;
	csf_rq_update();
	mutex_unlock(&csf_rq_lock);
}

/* In the CPU's hotplug thread: nothing here may take the hotplug lock. */
void csf_rq_cpu_online(unsigned int cpu)
{
	if (READ_ONCE(csf_rq_active) && !READ_ONCE(per_cpu(csf_rq, cpu)))
		schedule_delayed_work(&csf_rq_work, 0);
}

void csf_rq_stop(void)
{
	mutex_lock(&csf_rq_lock);
	WRITE_ONCE(csf_rq_active, false);
	mutex_unlock(&csf_rq_lock);
	cancel_delayed_work_sync(&csf_rq_work);
	mutex_lock(&csf_rq_lock);
	if (csf_rq_probing) {
		tracepoint_probe_unregister(csf_rq_tp, csf_rq_probe, NULL);
		tracepoint_synchronize_unregister();
		csf_rq_probing = false;
	}
	mutex_unlock(&csf_rq_lock);
	csf_pokes_flush(); /* no module code may run after the module's exit */
}

s32 csf_nr_running(int cpu)
{
	void *rq = READ_ONCE(per_cpu(csf_rq, cpu));

	if (!rq)
		return -1;
	return READ_ONCE(*(unsigned int *)((char *)rq + csf_rq_nr_off));
}

/* Offsets in struct rq from BTF; sizeof(struct sched_class) (0: unknown). */
static u32 csf_learn_btf(void)
{
	u32 nr_off, nr_size, cpu_off, cpu_size, class_size = 0;
	struct csf_btf b;
	void *data;
	int rq, sc, err;

	err = csf_btf_vmlinux(&b, &data);
	if (err) {
		pr_info("slice watch: no BTF (/sys/kernel/btf/vmlinux: %d): waiting tasks reported as -1\n",
			err);
		return 0;
	}
	rq = csf_btf_find_struct(&b, "rq");
	err = rq < 0 ? rq : csf_btf_member(&b, rq, "nr_running", &nr_off, &nr_size);
	if (!err)
		err = csf_btf_member(&b, rq, "cpu", &cpu_off, &cpu_size);
	if (!err && (nr_size != sizeof(unsigned int) || cpu_size != sizeof(int)))
		err = -EINVAL;
	if (!err) {
		csf_rq_nr_off = nr_off;
		csf_rq_cpu_off = cpu_off;
		pr_info("slice watch: struct rq from BTF: nr_running at %u, cpu at %u\n", nr_off,
			cpu_off);
	} else {
		pr_info("slice watch: struct rq not found in BTF (%d): waiting tasks reported as -1\n",
			err);
	}
	sc = csf_btf_find_struct(&b, "sched_class");
	if (sc < 0 || csf_btf_struct_size(&b, sc, &class_size))
		class_size = 0;
	vfree(data);
	return class_size;
}

int csf_learn_sched(struct tracepoint *nr_running_tp)
{
	const struct sched_class *stop = NULL, *fair;
	u32 class_size;
	int cpu, err;

	csf_rq_tp = nr_running_tp;
	for_each_possible_cpu(cpu)
		INIT_WORK(&per_cpu_ptr(&csf_pokes, cpu)->work, csf_poke_fn);
	cpus_read_lock();
	err = stop_core_cpuslocked(cpumask_first(cpu_online_mask), csf_learn_stop, &stop);
	cpus_read_unlock();
	if (err)
		return err;
	fair = csf_learn_fair();
	class_size = csf_learn_btf();
	csf_place_classes(stop, fair, init_task.sched_class, class_size);
	return 0;
}
