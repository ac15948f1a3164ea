// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: the long-slice watch (slice_warn_us).
 *
 * Sees a task that has held a CPU longer than slice_warn_us while it still holds it, in every
 * scheduling class, and reports it at the threshold, at 2x, 4x, 8x... and once more when the
 * slice ends. Off (0) by default; while off, nothing of it runs: no probe, no timer.
 *
 * - A sched_switch probe copies, per CPU, what the slice is: when it began, the task's ids,
 *   comm, policy, priorities and class. It never writes scheduler state, and nothing here
 *   dereferences a task but the ones the probe is handed at the switch.
 * - A hard hrtimer on every online CPU, every watch period, checks its own CPU's slice and its
 *   next online neighbour's. A CPU that takes interrupts reports itself, with the stack of the
 *   task its timer interrupted. A CPU that takes none (interrupts off, a stopper) is reported
 *   by its neighbour one period later than it would have reported itself; the neighbour asks
 *   it for its stack with an NMI and reports once the NMI has answered (or not, in time).
 * - Isolated CPUs (nohz_full, isolcpus) run no timer of the watch and get no NMI from it,
 *   unless slice_isolated is set: the watcher before one in CPU order reports its slices
 *   from what its switch probe wrote, without a stack (stack_via=isolated).
 * - Classes, and where each CPU's runqueue count is, are learned when the watch is first
 *   switched on, runqueues also of CPUs that come online later (slice_learn.c).
 * - Reports go to trace events and to the ring the root-only file "slices" reads (slice_report.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/uaccess.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/isolation.h>
#include <linux/seqlock.h>
#include <linux/tracepoint.h>
#include <asm/irq_regs.h>

#include "compat.h"
#include "csf.h"
#include "slice.h"
#include "slice_stack.h"

#define CSF_SLICE_MIN_US 1000 /* 1 ms: below, the watch's timers would cost more than it finds */
#define CSF_SLICE_MAX_US 60000000 /* 60 s */
#define CSF_NMI_WAIT_NS (50 * NSEC_PER_MSEC) /* how long a watcher waits for an NMI's stack */
#define CSF_NMI_POLL_NS (1 * NSEC_PER_MSEC)
/*
 * How long an NMI the watch sent may still be in flight: until then an NMI that nobody asked
 * for is taken as that one (not an unknown NMI), and switching the watch off waits for it.
 * One that never comes (its CPU went offline) stops making other NMIs ours after this.
 */
#define CSF_NMI_FLIGHT_NS (1000 * NSEC_PER_MSEC)
#define CSF_NMI_GONE BIT_ULL(63) /* nmi_done: the slice asked for had ended: no stack */

unsigned int slice_warn_us; /* 0: the watch is off */
u64 csf_slice_long_cyc; /* slice_warn_us in cycles, for thread.c's nr_long_oncpu */

/* The slice a CPU runs now, as its sched_switch probe saw it begin. */
struct csf_slice {
	u64 id; /* which slice of this CPU: one more at every switch */
	u64 start_ns;
	pid_t pid, tgid;
	char comm[TASK_COMM_LEN];
	int rtprio, nice;
	u32 policy;
	u8 class;
	u64 sum_exec; /* the task's se.sum_exec_runtime: at the slice's start, or as of now */
};

/*
 * A CPU's claim word: its slice's id above CSF_CLAIM_SHIFT, the reports made of that slice
 * below, CSF_CLAIM_MADE of them at most (csf_due() allows fewer than 64).
 */
#define CSF_CLAIM_SHIFT 8
#define CSF_CLAIM_MADE 0xff

static __always_inline s64 csf_claim_word(u64 id, unsigned int made)
{
	return (s64)(id << CSF_CLAIM_SHIFT | made);
}

/* A report a watcher has claimed and waits to finish (its NMI stack). */
struct csf_pending {
	bool busy;
	int cpu; /* whose stack */
	u64 id; /* of which of its slices */
	u64 sum_start; /* the slice's task's sum_exec_runtime when it began */
	u64 asked_ns;
	struct csf_slice_report r;
};

struct csf_slice_cpu {
	seqcount_t seq; /* the slice, written by this CPU's probe, read by the watchers */
	struct csf_slice slice;
	/* csf_claim_word(slice id, reports made): the watchers claim each report with a cmpxchg. */
	atomic64_t claim;
	/*
	 * An NMI's answer: a watcher sets want to the id of the slice it claimed, this CPU's NMI
	 * takes the request, fills stack and sets done to that id, or to id | CSF_NMI_GONE when
	 * the CPU runs another slice by then (its stack would be another task's).
	 */
	atomic64_t nmi_want, nmi_done;
	atomic_t nmi_sent; /* NMIs watchers sent this CPU */
	u64 nmi_sent_ns; /* when the last was sent, ktime_get_mono_fast_ns() */
	int nmi_seen; /* of those, how many this CPU took (its NMI handler's own count) */
	struct csf_stack nmi_stack;
	struct csf_slice nmi_sched; /* the interrupted task's pid and scheduling, as of the NMI */
	/* This CPU as a watcher. */
	struct hrtimer tick, follow;
	struct csf_pending pending;
	/* Isolated: no timer of the watch runs here, no NMI is sent here (set while offline). */
	bool quiet;
};

static DEFINE_PER_CPU(struct csf_slice_cpu, csf_slice_cpus);

static DEFINE_MUTEX(csf_slice_lock); /* switching the watch on and off, slice_warn_us */
static bool csf_slice_on, csf_slice_ready;
static bool slice_isolated; /* isolated CPUs run the watch's timer and take its NMIs too */
static enum cpuhp_state csf_slice_hp;
static struct tracepoint *csf_switch_tp, *csf_nr_running_tp;

/*
 * A task's scheduling now, from a task the caller holds: current in its own interrupt, or prev
 * at the switch. A task can change its policy while it runs, without a switch.
 */
static void csf_sched_of(struct csf_slice *s, struct task_struct *p)
{
	s->pid = p->pid;
	memcpy(s->comm, p->comm, sizeof(s->comm)); /* prctl(PR_SET_NAME) needs no switch either */
	s->rtprio = p->rt_priority;
	s->nice = task_nice(p);
	s->policy = p->policy;
	s->class = csf_class_of(p->sched_class);
	s->sum_exec = p->se.sum_exec_runtime; /* as of its last update_curr() */
}

/* An NMI sent to sc's CPU lately that it has not taken yet. */
static bool csf_nmi_in_flight(struct csf_slice_cpu *sc)
{
	int sent = atomic_read(&sc->nmi_sent);

	smp_rmb(); /* nmi_sent_ns is written before nmi_sent is counted */
	return sent != READ_ONCE(sc->nmi_seen) &&
	       ktime_get_mono_fast_ns() - READ_ONCE(sc->nmi_sent_ns) < CSF_NMI_FLIGHT_NS;
}

/* A watcher on another CPU asked for this CPU's stack (and its task's scheduling). */
bool csf_slice_nmi(struct pt_regs *regs)
{
	struct csf_slice_cpu *sc = this_cpu_ptr(&csf_slice_cpus);
	s64 want = atomic64_read(&sc->nmi_want);
	unsigned int seq;

	/*
	 * Ours: asked for, or sent lately and not yet taken (one that arrives after its watcher
	 * gave up must not be an unknown NMI either; one that never came must not make another
	 * NMI, a BMC's crash dump say, ours for ever).
	 */
	if (!want && !csf_nmi_in_flight(sc))
		return false;
	WRITE_ONCE(sc->nmi_seen, atomic_read(&sc->nmi_sent));
	if (!want || !atomic64_try_cmpxchg(&sc->nmi_want, &want, 0))
		return true;
	/*
	 * The stack is the asked slice's only if this CPU still runs it: the watcher claimed it
	 * some time ago. The NMI may have interrupted this CPU's own switch probe mid-write (an
	 * odd count): the slice is changing then.
	 */
	seq = raw_read_seqcount(&sc->seq);
	if ((seq & 1) || sc->slice.id != (u64)want) {
		atomic64_set_release(&sc->nmi_done, want | CSF_NMI_GONE);
		return true;
	}
	csf_sched_of(&sc->nmi_sched, current);
	csf_stack_save(&sc->nmi_stack, regs);
	atomic64_set_release(&sc->nmi_done, want);
	return true;
}

/* ---- The switch ---- */

/*
 * Scheduling as the holder of the task saw it just now, if it is the slice's task, and the
 * task's execution time since sum_start (its sum_exec_runtime when the slice began).
 */
static void csf_fill_sched(struct csf_slice_report *r, const struct csf_slice *now, u64 sum_start)
{
	if (now->pid != r->pid)
		return;
	if (now->sum_exec >= sum_start)
		r->exec_ns = now->sum_exec - sum_start;
	memcpy(r->comm, now->comm, sizeof(r->comm));
	r->rtprio = now->rtprio;
	r->nice = now->nice;
	r->policy = now->policy;
	r->class = now->class;
}

static void csf_fill_report(struct csf_slice_report *r, const struct csf_slice *s, int cpu, u64 len,
			    u8 event)
{
	r->start_ns = s->start_ns;
	r->len_ns = len;
	r->pid = s->pid;
	r->tgid = s->tgid;
	memcpy(r->comm, s->comm, sizeof(r->comm));
	r->rtprio = s->rtprio;
	r->nice = s->nice;
	r->policy = s->policy;
	r->cpu = cpu;
	r->class = s->class;
	r->event = event;
	r->stack_via = CSF_STACK_NONE;
	r->stack.nr = 0;
	r->stack.user = 0;
	r->exec_ns = -1;
}

/*
 * On this CPU, interrupts off, runqueue locked: the slice of prev ends, next's begins. prev
 * and next are the tasks the scheduler hands over; nothing else is dereferenced.
 */
static void csf_switch_probe(void *data, bool preempt, struct task_struct *prev,
			     struct task_struct *next, unsigned int prev_state)
{
	struct csf_slice_cpu *sc = this_cpu_ptr(&csf_slice_cpus);
	struct csf_slice *s = &sc->slice;
	u64 now = local_clock(), len = now - s->start_ns;
	u64 threshold = (u64)READ_ONCE(slice_warn_us) * NSEC_PER_USEC;

	if (s->class != CSF_CLASS_IDLE && threshold && len >= threshold && s->pid == prev->pid) {
		struct csf_slice_report r;
		s32 nr = csf_nr_running(smp_processor_id());
		struct csf_slice now;

		csf_fill_report(&r, s, smp_processor_id(), len, CSF_SLICE_END);
		csf_sched_of(&now, prev);
		csf_fill_sched(&r, &now, s->sum_exec);
		/* Waiting besides prev, which the count still holds if it was preempted. */
		r.waiting = nr < 0 ? -1 : nr - (preempt || prev_state == TASK_RUNNING);
		csf_report(&r);
	}

	raw_write_seqcount_begin(&sc->seq);
	s->id++;
	s->start_ns = now;
	s->pid = next->pid;
	s->tgid = next->tgid;
	memcpy(s->comm, next->comm, sizeof(s->comm));
	s->rtprio = next->rt_priority;
	s->nice = task_nice(next);
	s->policy = next->policy;
	s->class = csf_class_of(next->sched_class);
	s->sum_exec = next->se.sum_exec_runtime;
	raw_write_seqcount_end(&sc->seq);
	atomic64_set(&sc->claim, csf_claim_word(s->id, 0));
}

/* ---- The watchers ---- */

static u64 csf_watch_period_ns(void)
{
	u64 p = (u64)READ_ONCE(slice_warn_us) * NSEC_PER_USEC / 4;

	return clamp_t(u64, p, NSEC_PER_MSEC, 100 * NSEC_PER_MSEC);
}

/* When the k-th report of a slice is due: at threshold << k (never, past what u64 holds). */
static u64 csf_due(u64 threshold, unsigned int k)
{
	return k < 64 - fls64(threshold) ? threshold << k : U64_MAX;
}

/*
 * Claim the next report of cpu's slice if it is due: at the threshold, then each time the
 * length doubles (one report however far it went past, so a late watcher does not flood).
 * extra: how much later than due a neighbour claims, giving the CPU itself first go.
 */
static bool csf_claim(int cpu, u64 now, u64 extra, struct csf_slice *out, u64 *len)
{
	struct csf_slice_cpu *sc = per_cpu_ptr(&csf_slice_cpus, cpu);
	u64 threshold = (u64)READ_ONCE(slice_warn_us) * NSEC_PER_USEC;
	s64 claim = atomic64_read(&sc->claim);
	unsigned int made = claim & CSF_CLAIM_MADE, next;
	unsigned int seq;

	do {
		seq = raw_read_seqcount_begin(&sc->seq);
		*out = sc->slice;
	} while (read_seqcount_retry(&sc->seq, seq));

	if (!threshold || out->class == CSF_CLASS_IDLE ||
	    out->id != (u64)claim >> CSF_CLAIM_SHIFT || (s64)(now - out->start_ns) <= 0)
		return false;
	*len = now - out->start_ns;
	if (*len < csf_due(threshold, made) || *len - csf_due(threshold, made) < extra)
		return false;
	for (next = made + 1; *len >= csf_due(threshold, next); next++)
		;
	return atomic64_try_cmpxchg(&sc->claim, &claim, csf_claim_word(out->id, next));
}

static void csf_finish_pending(struct csf_slice_cpu *me)
{
	struct csf_slice_cpu *them = per_cpu_ptr(&csf_slice_cpus, me->pending.cpu);
	s64 id = me->pending.id;

	if (atomic64_read_acquire(&them->nmi_done) == id) {
		me->pending.r.stack = them->nmi_stack;
		me->pending.r.stack_via = CSF_STACK_NMI;
		csf_fill_sched(&me->pending.r, &them->nmi_sched, me->pending.sum_start);
	} else {
		atomic64_try_cmpxchg(&them->nmi_want, &id, 0); /* no answer will be waited for */
		me->pending.r.stack_via = CSF_STACK_LOST;
	}
	csf_report(&me->pending.r);
	me->pending.busy = false;
}

/* A neighbour's NMI is answering: report once it has, or once it is too late. */
static enum hrtimer_restart csf_follow(struct hrtimer *t)
{
	struct csf_slice_cpu *me = this_cpu_ptr(&csf_slice_cpus);
	struct csf_slice_cpu *them;
	u64 done;

	if (!me->pending.busy)
		return HRTIMER_NORESTART;
	them = per_cpu_ptr(&csf_slice_cpus, me->pending.cpu);
	done = atomic64_read_acquire(&them->nmi_done);
	if ((done & ~CSF_NMI_GONE) != me->pending.id &&
	    local_clock() - me->pending.asked_ns < CSF_NMI_WAIT_NS) {
		hrtimer_forward_now(t, ns_to_ktime(CSF_NMI_POLL_NS));
		return HRTIMER_RESTART;
	}
	csf_finish_pending(me);
	return HRTIMER_NORESTART;
}

static void csf_check_self(struct csf_slice_cpu *me, int cpu, u64 now)
{
	struct csf_slice_report r;
	struct csf_slice s, cur;
	s32 nr;
	u64 len;

	if (!csf_claim(cpu, now, 0, &s, &len))
		return;
	csf_fill_report(&r, &s, cpu, len, CSF_SLICE_RUNNING);
	csf_sched_of(&cur, current); /* the task this interrupt interrupted */
	csf_fill_sched(&r, &cur, s.sum_exec);
	nr = csf_nr_running(cpu);
	r.waiting = nr < 0 ? -1 : nr - 1;
	/* The timer interrupted the slice's own task: its registers are the task's. */
	csf_stack_save(&r.stack, get_irq_regs());
	r.stack_via = CSF_STACK_IRQ;
	csf_report(&r);
}

static void csf_check_neighbour(struct csf_slice_cpu *me, int cpu, u64 now, u64 period)
{
	struct csf_slice_cpu *them = per_cpu_ptr(&csf_slice_cpus, cpu);
	struct csf_slice s;
	s32 nr;
	u64 len;

	if (me->pending.busy || !csf_claim(cpu, now, period + period / 2, &s, &len))
		return;
	csf_fill_report(&me->pending.r, &s, cpu, len, CSF_SLICE_RUNNING);
	nr = csf_nr_running(cpu);
	me->pending.r.waiting = nr < 0 ? -1 : nr - 1;
	me->pending.cpu = cpu;
	me->pending.id = s.id;
	me->pending.sum_start = s.sum_exec;
	me->pending.asked_ns = now;
	/* No NMI on this kernel, or another watcher's request not yet answered (hotplug changed
	 * neighbours): no stack.
	 */
	if (!csf_nmi_available()) {
		me->pending.r.stack_via = CSF_STACK_NO_NMI;
		csf_report(&me->pending.r);
		return;
	}
	if (atomic64_cmpxchg(&them->nmi_want, 0, s.id)) {
		me->pending.r.stack_via = CSF_STACK_LOST;
		csf_report(&me->pending.r);
		return;
	}
	me->pending.busy = true;
	WRITE_ONCE(them->nmi_sent_ns, ktime_get_mono_fast_ns());
	smp_wmb(); /* csf_nmi_in_flight() */
	atomic_inc(&them->nmi_sent);
	csf_nmi_send(cpu);
	hrtimer_start(&me->follow, ns_to_ktime(CSF_NMI_POLL_NS), HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * An isolated CPU's slice, seen from a housekeeping CPU: no interrupt, no NMI disturbs it, so
 * there is no stack, nor the task's execution time as of now. Claimed without delay, as the
 * CPU never reports itself.
 */
static void csf_check_quiet(int cpu, u64 now)
{
	struct csf_slice_report r;
	struct csf_slice s;
	s32 nr;
	u64 len;

	if (!csf_claim(cpu, now, 0, &s, &len))
		return;
	csf_fill_report(&r, &s, cpu, len, CSF_SLICE_RUNNING);
	nr = csf_nr_running(cpu);
	r.waiting = nr < 0 ? -1 : nr - 1;
	r.stack_via = CSF_STACK_ISOLATED;
	csf_report(&r);
}

bool csf_slice_cpu_quiet(int cpu)
{
	return READ_ONCE(per_cpu_ptr(&csf_slice_cpus, cpu)->quiet);
}

/* The online CPU after cpu, in a ring. */
static int csf_next_online(int cpu)
{
	int next = cpumask_next(cpu, cpu_online_mask);

	return next < nr_cpu_ids ? next : cpumask_first(cpu_online_mask);
}

/*
 * Each watcher checks itself, the isolated CPUs that follow it, and the next watcher (one
 * that is not isolated), whom it asks for a stack with an NMI. Which CPUs are quiet is set
 * while the watch is off.
 */
static enum hrtimer_restart csf_tick(struct hrtimer *t)
{
	struct csf_slice_cpu *me = this_cpu_ptr(&csf_slice_cpus);
	int cpu = smp_processor_id(), next;
	u64 now = local_clock(), period = csf_watch_period_ns();

	csf_check_self(me, cpu, now);
	csf_slices_tick();
	for (next = csf_next_online(cpu); next != cpu; next = csf_next_online(next)) {
		if (!csf_slice_cpu_quiet(next)) {
			csf_check_neighbour(me, next, now, period);
			break;
		}
		csf_check_quiet(next, now);
	}
	hrtimer_forward_now(t, ns_to_ktime(period));
	return HRTIMER_RESTART;
}

/*
 * Isolated: taken out of the scheduler's domains (isolcpus, a cpuset's isolated partition
 * where the kernel counts those) or of the tick's housekeeping (nohz_full). The users of
 * these CPUs keep their latency-critical threads there: by default the watch does not
 * interrupt them.
 */
static bool csf_cpu_isolated(int cpu)
{
	return !housekeeping_cpu(cpu, HK_TYPE_TICK) || !housekeeping_cpu(cpu, HK_TYPE_DOMAIN);
}

/* CPU hotplug: each online CPU runs its own watcher, unless it is isolated. Called on that CPU. */
static int csf_slice_cpu_online(unsigned int cpu)
{
	struct csf_slice_cpu *sc = per_cpu_ptr(&csf_slice_cpus, cpu);

	if (!sc->quiet)
		hrtimer_start(&sc->tick, ns_to_ktime(csf_watch_period_ns()),
			      HRTIMER_MODE_REL_PINNED_HARD);
	csf_rq_cpu_online(cpu);
	return 0;
}

static int csf_slice_cpu_offline(unsigned int cpu)
{
	struct csf_slice_cpu *sc = per_cpu_ptr(&csf_slice_cpus, cpu);

	hrtimer_cancel(&sc->tick);
	hrtimer_cancel(&sc->follow);
	if (sc->pending.busy) /* its NMI will not be waited for any more */
		csf_finish_pending(sc);
	return 0;
}

/* ---- On and off ---- */

static void csf_slice_reset_cpus(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct csf_slice_cpu *sc = per_cpu_ptr(&csf_slice_cpus, cpu);

		/* Until its next switch, a CPU's slice is unknown: treated as idle. */
		sc->slice.class = CSF_CLASS_IDLE;
		atomic64_set(&sc->claim, csf_claim_word(sc->slice.id, 0));
		atomic64_set(&sc->nmi_want, 0);
		atomic64_set(&sc->nmi_done, 0);
		sc->pending.busy = false;
		/* CPUs isolated now, online or not: the isolation of a CPU set at boot stays. */
		sc->quiet = !READ_ONCE(slice_isolated) && csf_cpu_isolated(cpu);
	}
}

static int csf_slice_start(void)
{
	static bool learned;
	int err;

	if (!learned) {
		err = csf_learn_sched(csf_nr_running_tp);
		if (err) {
			pr_err("slice watch: cannot learn the scheduling classes: %d\n", err);
			return err;
		}
		learned = true;
	}
	csf_slice_reset_cpus();
	err = csf_nmi_register();
	if (err)
		return err;
	err = tracepoint_probe_register(csf_switch_tp, csf_switch_probe, NULL);
	if (err)
		goto out_nmi;
	err = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "coarse_stat_fs/slice:online",
				csf_slice_cpu_online, csf_slice_cpu_offline);
	if (err < 0)
		goto out_tp;
	csf_slice_hp = err;
	csf_rq_start();
	return 0;

out_tp:
	tracepoint_probe_unregister(csf_switch_tp, csf_switch_probe, NULL);
	tracepoint_synchronize_unregister();
out_nmi:
	csf_nmi_unregister();
	return err;
}

static void csf_slice_stop(void)
{
	int cpu;

	cpuhp_remove_state(csf_slice_hp); /* every CPU's timers cancelled: no more NMIs sent */
	csf_rq_stop();
	tracepoint_probe_unregister(csf_switch_tp, csf_switch_probe, NULL);
	tracepoint_synchronize_unregister();
	/*
	 * An NMI still in flight when the handler goes would be an unknown NMI (a panic with
	 * unknown_nmi_panic): wait for those sent to arrive, or to be given up for lost.
	 */
	for_each_possible_cpu(cpu)
		while (csf_nmi_in_flight(per_cpu_ptr(&csf_slice_cpus, cpu)))
			usleep_range(1000, 2000);
	csf_nmi_unregister(); /* waits for a running handler */
	csf_slices_sync();
}

/* Switch the watch to us (0: off). Called with csf_slice_lock held. */
static int csf_slice_set(unsigned int us)
{
	int err;

	if (us && !csf_slice_on) {
		WRITE_ONCE(slice_warn_us, us);
		err = csf_slice_start();
		if (err) {
			WRITE_ONCE(slice_warn_us, 0);
			return err;
		}
		csf_slice_on = true;
	} else if (!us && csf_slice_on) {
		WRITE_ONCE(csf_slice_long_cyc, 0);
		csf_slice_stop();
		csf_slice_on = false;
	}
	WRITE_ONCE(slice_warn_us, us);
	WRITE_ONCE(csf_slice_long_cyc, csf_ns_to_cyc((u64)us * NSEC_PER_USEC));
	return 0;
}

static int csf_slice_param_set(const char *val, const struct kernel_param *kp)
{
	unsigned int us;
	int err = kstrtouint(val, 0, &us);

	if (err)
		return err;
	if (us && (us < CSF_SLICE_MIN_US || us > CSF_SLICE_MAX_US))
		return -EINVAL;
	mutex_lock(&csf_slice_lock);
	if (csf_slice_ready)
		err = csf_slice_set(us);
	else
		WRITE_ONCE(slice_warn_us, us); /* at load: csf_slice_init() starts it */
	mutex_unlock(&csf_slice_lock);
	return err;
}

static const struct kernel_param_ops csf_slice_param_ops = {
	.set = csf_slice_param_set,
	.get = param_get_uint,
};

module_param_cb(slice_warn_us, &csf_slice_param_ops, &slice_warn_us, 0644);
MODULE_PARM_DESC(slice_warn_us,
		 "report CPU slices longer than this while they run, us (0 off, 1000 to 60000000)");

/* slice_isolated: applied at once; a watch that is on starts again (its reports go on). */
static int csf_isolated_param_set(const char *val, const struct kernel_param *kp)
{
	unsigned int us;
	bool on;
	int err = kstrtobool(val, &on);

	if (err)
		return err;
	mutex_lock(&csf_slice_lock);
	us = READ_ONCE(slice_warn_us);
	if (csf_slice_ready && csf_slice_on && on != slice_isolated) {
		csf_slice_set(0);
		WRITE_ONCE(slice_isolated, on);
		err = csf_slice_set(us);
	} else {
		WRITE_ONCE(slice_isolated, on);
	}
	mutex_unlock(&csf_slice_lock);
	return err;
}

static const struct kernel_param_ops csf_isolated_param_ops = {
	.set = csf_isolated_param_set,
	.get = param_get_bool,
};

module_param_cb(slice_isolated, &csf_isolated_param_ops, &slice_isolated, 0644);
MODULE_PARM_DESC(slice_isolated, "also interrupt isolated (nohz_full, isolcpus) CPUs (default N)");

/* ---- Module ---- */

static void csf_find_tps(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sched_switch"))
		csf_switch_tp = tp;
	else if (!strcmp(tp->name, "sched_update_nr_running_tp"))
		csf_nr_running_tp = tp;
}

int csf_slice_init(void)
{
	int cpu, err = 0;

	for_each_possible_cpu(cpu) {
		struct csf_slice_cpu *sc = per_cpu_ptr(&csf_slice_cpus, cpu);

		seqcount_init(&sc->seq);
		csf_hrtimer_setup(&sc->tick, csf_tick, CLOCK_MONOTONIC,
				  HRTIMER_MODE_REL_PINNED_HARD);
		csf_hrtimer_setup(&sc->follow, csf_follow, CLOCK_MONOTONIC,
				  HRTIMER_MODE_REL_PINNED_HARD);
	}
	for_each_kernel_tracepoint(csf_find_tps, NULL);
	if (!csf_switch_tp || !csf_nr_running_tp) {
		pr_err("tracepoint sched_switch or sched_update_nr_running_tp not found\n");
		return -ENOENT;
	}
	mutex_lock(&csf_slice_lock);
	csf_slice_ready = true;
	if (slice_warn_us) /* given at load */
		err = csf_slice_set(slice_warn_us);
	if (err)
		csf_slice_ready = false;
	mutex_unlock(&csf_slice_lock);
	return err;
}

void csf_slice_exit(void)
{
	mutex_lock(&csf_slice_lock);
	csf_slice_set(0);
	csf_slice_ready = false;
	mutex_unlock(&csf_slice_lock);
}
