// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: what the kernel's own FPU saves and restores cost as they happen, and how
 * that timing compares with the fpu file's calibrated run (fpu.c).
 *
 * The csf_fpu trace events time the kernel's own save on the context switch
 * (save_fpregs_to_fpstate() called from __switch_to()) and restore on the way back to user
 * space (restore_fpregs_from_fpstate() called from switch_fpu_return()), with a kretprobe on
 * each, armed only while its event is enabled. Calls from elsewhere (kernel_fpu_begin(),
 * fork, signals, KVM) are told apart by their return address and left untimed. The probes'
 * own cost is measured on a function of the module when they are armed and subtracted.
 * The events print what the unmerged series printed (fpu_trace.h), latency in ns.
 *
 * The probe check, the last rows of a calibrated run, times one instruction both by a probe
 * and directly. The probes' state is /sys/kernel/debug/coarse_stat_fs/fpu_live.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/kprobes.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/fpu/types.h>
#include <asm/processor.h>
#include <asm/tsc.h>

#include "csf.h"
#include "fpu.h"

#define CREATE_TRACE_POINTS
#include "fpu_trace.h"

/* ---- Probes: timing a function between its entry and its return ---- */

/* Per timed call: kretprobe_instance data. */
struct csf_fpu_ri {
	u64 t0;
	struct fpstate *fps;
	u64 rfbm, xinuse;
};

#define CSF_FPU_CALIB 1000 /* calls timed to learn what the probes themselves cost */
#define CSF_FPU_CALLERS 16 /* distinct callers remembered per probe */

/*
 * Two locks, neither held for long while the other waits: csf_fpu_lock guards arming (the
 * events' reg/unreg callbacks, which the tracing core calls under event_mutex and
 * tracepoints_mutex: every tracepoint enable on the machine waits while they do) and lasts
 * one short calibration; csf_fpu_check_lock serializes the probe checks of calibrated runs,
 * which last as long as their samples, up to the run's bound.
 */
static DEFINE_MUTEX(csf_fpu_lock);
static DEFINE_MUTEX(csf_fpu_check_lock);
static bool csf_fpu_ready; /* between init and exit */

/*
 * A kretprobe on one of the module's own functions, recording the cycles of its owner's calls
 * only. Each user probes functions of its own: arming csf_fpu_empty(), the probe check
 * csf_fpu_check_empty() and csf_fpu_ref(), so that neither sees the other's calls.
 */
struct csf_fpu_calib {
	struct kretprobe rp;
	struct task_struct *owner;
	u32 n, max; /* written by the owner's calls only, one at a time */
	u32 *out;
	u64 overhead; /* subtracted from what is recorded */
};

static struct csf_fpu_calib csf_fpu_arm_calib; /* under csf_fpu_lock */
static struct csf_fpu_calib csf_fpu_check_calib; /* under csf_fpu_check_lock */

static __always_inline int csf_fpu_calib_entry(struct csf_fpu_calib *c,
					       struct kretprobe_instance *ri)
{
	struct csf_fpu_ri *d = (void *)ri->data;

	if (current != READ_ONCE(c->owner))
		return 1; /* another task's call: no return probe, nothing recorded */
	d->t0 = rdtsc_ordered(); /* last, as in the live probes */
	return 0;
}

static __always_inline void csf_fpu_calib_ret(struct csf_fpu_calib *c,
					      struct kretprobe_instance *ri, u64 t1)
{
	struct csf_fpu_ri *d = (void *)ri->data;
	u64 cyc = t1 - d->t0;

	if (c->n < c->max) {
		cyc = cyc > c->overhead ? cyc - c->overhead : 0;
		c->out[c->n++] = min_t(u64, cyc, U32_MAX);
	}
}

static int csf_fpu_arm_calib_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return csf_fpu_calib_entry(&csf_fpu_arm_calib, ri);
}

static int csf_fpu_arm_calib_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	u64 t1 = rdtsc_ordered(); /* first, as in the live probes */

	csf_fpu_calib_ret(&csf_fpu_arm_calib, ri, t1);
	return 0;
}

static int csf_fpu_check_calib_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	return csf_fpu_calib_entry(&csf_fpu_check_calib, ri);
}

static int csf_fpu_check_calib_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	u64 t1 = rdtsc_ordered(); /* first, as in the live probes */

	csf_fpu_calib_ret(&csf_fpu_check_calib, ri, t1);
	return 0;
}

/*
 * What the probes cost: an empty function, called the way the probed ones are. One for
 * arming, one for the probe check; their asm differs, so that the compiler does not fold them
 * into one (identical code folding), which would put both users' probes on one function.
 */
static noinline void csf_fpu_empty(void *arg)
{
	asm volatile("" : : "r"(arg) : "memory");
}

static noinline void csf_fpu_check_empty(void *arg)
{
	asm volatile("nop" : : "r"(arg) : "memory");
}

/* An instruction in a function of its own, timed both ways by the probe check. */
static noinline int csf_fpu_ref(enum csf_xop op, void *buf, u64 mask)
{
	return csf_xop(op, buf, mask);
}

/* Called through pointers (READ_ONCE), so that the compiler neither drops nor clones the calls. */
static void (*csf_fpu_empty_fn)(void *) = csf_fpu_empty;
static void (*csf_fpu_check_empty_fn)(void *) = csf_fpu_check_empty;
static int (*csf_fpu_ref_fn)(enum csf_xop, void *, u64) = csf_fpu_ref;

/* Arm c on fn for the calling task's calls, up to max of them into out. */
static int csf_fpu_calib_arm(struct csf_fpu_calib *c, void *fn, u64 overhead, u32 *out, u32 max)
{
	bool check = c == &csf_fpu_check_calib;

	memset(&c->rp, 0, sizeof(c->rp));
	c->rp.kp.addr = fn;
	c->rp.entry_handler = check ? csf_fpu_check_calib_entry : csf_fpu_arm_calib_entry;
	c->rp.handler = check ? csf_fpu_check_calib_ret : csf_fpu_arm_calib_ret;
	c->rp.data_size = sizeof(struct csf_fpu_ri);
	c->owner = current;
	c->n = 0;
	c->max = max;
	c->out = out;
	c->overhead = overhead;
	return register_kretprobe(&c->rp);
}

/* The probes' own cost (median and p99 of n empty calls, interrupts off), in cycles. */
static int csf_fpu_probe_overhead(struct csf_fpu_calib *c, u32 *buf, u32 n,
				  struct csf_fpu_stats *st, bool *ftrace)
{
	/* each user its own function; called through a pointer read once, not known to be it */
	void (*fn)(void *arg) = c == &csf_fpu_check_calib ? READ_ONCE(csf_fpu_check_empty_fn) :
							    READ_ONCE(csf_fpu_empty_fn);
	unsigned long flags;
	u32 i;
	int err;

	err = csf_fpu_calib_arm(c, fn, 0, buf, n);
	if (err)
		return err;
	*ftrace = kprobe_ftrace(&c->rp.kp);
	for (i = 0; i < n; i++) {
		local_irq_save(flags);
		fn(NULL);
		local_irq_restore(flags);
	}
	unregister_kretprobe(&c->rp);
	if (c->n < n)
		return -EAGAIN; /* calls went unseen: the probe missed them */
	csf_fpu_stats(buf, n, st);
	return 0;
}

/*
 * The probe check's call timed directly, with the timer as around an instruction; or, as its
 * control (call false), the same loop without the call: the empty timer through the same
 * subtraction, which then reads 0 at the median. Inlined with call a constant, so that the
 * control's timed window holds nothing else.
 */
static __always_inline int csf_fpu_direct(struct csf_fpu_run *r, enum csf_xop op, u64 mask,
					  const bool call, struct csf_fpu_stats *st)
{
	unsigned long flags;
	u32 i = 0, b;
	int err, xerr = 0;

	while (i < r->samples && !xerr) {
		kernel_fpu_begin();
		for (b = 0; b < CSF_FPU_BATCH && i < r->samples && !xerr; b++, i++) {
			u64 t0, t;

			local_irq_save(flags);
			xerr = csf_fpu_load(r, CSF_XMODIFIED, mask);
			t0 = csf_tsc_begin();
			if (call && !xerr)
				xerr = READ_ONCE(csf_fpu_ref_fn)(op, r->dst, mask);
			t = csf_tsc_end() - t0;
			csf_fpu_put_pkru(r);
			local_irq_restore(flags);
			r->s[i] = t <= r->timer ? 0 : min_t(u64, t - r->timer, U32_MAX);
		}
		kernel_fpu_end();
		if (xerr)
			return -EIO;
		err = csf_fpu_pause(r);
		if (err)
			return err;
	}
	csf_fpu_sample_stats(r, r->samples, st);
	return 0;
}

/*
 * How precise the live probes are, next to the calibrated numbers: the kernel's save
 * instruction on the task mask, modified state, in a function of its own (csf_fpu_ref()),
 * timed by a probe as the live events are (probe cost subtracted) and by the timer around the
 * call (timer cost subtracted). Prints "check unavailable ERR" where kretprobes cannot be
 * used; that is not an error. Under csf_fpu_check_lock: the direct timing must not meet
 * another run's probe on csf_fpu_ref().
 */
static int csf_fpu_probe_check_locked(struct csf_fpu_run *r)
{
	enum csf_xop op = csf_kernel_save();
	struct csf_fpu_calib *c = &csf_fpu_check_calib;
	u64 mask = r->measured;
	struct csf_fpu_stats ov, probe, direct, control;
	unsigned long flags;
	bool ftrace;
	u32 i, b;
	int err, xerr = 0;

	err = csf_fpu_direct(r, op, mask, false, &control);
	if (err)
		return err;
	csf_fpu_printf(r, "control check %u %u %u %u\n", control.n, control.p50, control.p99,
		       control.clamped);
	err = csf_fpu_direct(r, op, mask, true, &direct);
	if (err)
		return err;

	/* The same call timed by a probe. */
	err = csf_fpu_probe_overhead(c, r->s, r->samples, &ov, &ftrace);
	if (!err)
		err = csf_fpu_calib_arm(c, csf_fpu_ref, ov.p50, r->s, r->samples);
	if (err) {
		csf_fpu_printf(r, "check unavailable %d\n", err);
		return 0;
	}
	for (i = 0; i < r->samples && !xerr;) {
		kernel_fpu_begin();
		for (b = 0; b < CSF_FPU_BATCH && i < r->samples && !xerr; b++, i++) {
			local_irq_save(flags);
			xerr = csf_fpu_load(r, CSF_XMODIFIED, mask);
			if (!xerr)
				xerr = READ_ONCE(csf_fpu_ref_fn)(op, r->dst, mask);
			csf_fpu_put_pkru(r);
			local_irq_restore(flags);
		}
		kernel_fpu_end();
		err = csf_fpu_pause(r);
		if (err)
			break;
	}
	unregister_kretprobe(&c->rp);
	i = c->n;
	if (xerr)
		return -EIO;
	if (err)
		return err;
	if (!i) {
		csf_fpu_printf(r, "check unavailable %d\n", -EAGAIN);
		return 0;
	}
	csf_fpu_stats(r->s, i, &probe);
	csf_fpu_printf(r, "check %s 0x%llx %u %u %u %u %u %u %u %d\n", csf_xop_name[op], mask, i,
		       probe.p50, probe.p99, direct.p50, direct.p99, ov.p50, ov.p99, ftrace);
	return 0;
}

/* One probe check at a time, on the whole machine; waiting for one ends on a signal. */
int csf_fpu_probe_check(struct csf_fpu_run *r)
{
	int err;

	if (mutex_lock_interruptible(&csf_fpu_check_lock))
		return -EINTR;
	err = csf_fpu_probe_check_locked(r);
	mutex_unlock(&csf_fpu_check_lock);
	return err;
}

/* ---- Live probes on the kernel's switch paths ---- */

struct csf_fpu_probe {
	struct kretprobe rp;
	const char *func; /* the probed function */
	const char *caller; /* the only caller timed */
	bool save; /* which event */
	bool armed;
	int error; /* of the last arming, 0 if none failed */
	bool ftrace, calib_ftrace; /* how the probe and its calibration were placed */
	struct csf_fpu_stats ov; /* the probe's cost, subtracted (cycles) */
	u64 overhead;
	int nmissed; /* at the last disarming */
	raw_spinlock_t lock; /* adding callers */
	unsigned int ncallers;
	struct {
		unsigned long addr;
		bool timed;
	} callers[CSF_FPU_CALLERS];
};

struct csf_fpu_counts {
	u64 timed, other;
};

static DEFINE_PER_CPU(struct csf_fpu_counts, csf_fpu_counts[2]); /* [0] save, [1] restore */
static u32 csf_fpu_calib_buf[CSF_FPU_CALIB];

/*
 * Whether the call about to run comes from the path this probe times. The return address is
 * on top of the stack at function entry; each new one is named once (as %ps prints it) and
 * remembered. Past CSF_FPU_CALLERS, unknown callers count as others, unnamed.
 */
static noinline bool csf_fpu_learn_caller(struct csf_fpu_probe *p, unsigned long ret)
{
	char name[64];
	size_t len = strlen(p->caller);
	unsigned long flags;
	unsigned int i, n;
	bool timed;

	snprintf(name, sizeof(name), "%ps", (void *)ret);
	/* a compiler suffix (__switch_to.cold, .isra.0) names the same function */
	timed = !strncmp(name, p->caller, len) && (!name[len] || name[len] == '.');
	raw_spin_lock_irqsave(&p->lock, flags);
	n = p->ncallers;
	for (i = 0; i < n && p->callers[i].addr != ret; i++)
		;
	if (i == n && n < CSF_FPU_CALLERS) {
		p->callers[n].addr = ret;
		p->callers[n].timed = timed;
		smp_store_release(&p->ncallers, n + 1); /* the entry before the count */
	}
	raw_spin_unlock_irqrestore(&p->lock, flags);
	return timed;
}

static __always_inline bool csf_fpu_timed_caller(struct csf_fpu_probe *p, struct pt_regs *regs)
{
	unsigned long ret = *(unsigned long *)kernel_stack_pointer(regs);
	unsigned int i, n = smp_load_acquire(&p->ncallers); /* entries below n are written */

	for (i = 0; i < n; i++)
		if (p->callers[i].addr == ret)
			return p->callers[i].timed;
	if (n == CSF_FPU_CALLERS)
		return false;
	return csf_fpu_learn_caller(p, ret);
}

static __always_inline u64 csf_fpu_live_ns(struct csf_fpu_probe *p, u64 cyc)
{
	cyc = cyc > p->overhead ? cyc - p->overhead : 0;
	return mul_u64_u32_shr(cyc, csf_clock.cyc2ns_mult, csf_clock.cyc2ns_shift);
}

static struct csf_fpu_probe csf_fpu_save, csf_fpu_rstor;

/* save_fpregs_to_fpstate(struct fpu *fpu): XINUSE is read after the save, as the series did. */
static int csf_fpu_save_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct csf_fpu_ri *d = (void *)ri->data;
	struct fpu *fpu = (struct fpu *)regs_get_kernel_argument(regs, 0);

	if (!csf_fpu_timed_caller(&csf_fpu_save, regs)) {
		this_cpu_inc(csf_fpu_counts[0].other);
		return 1; /* no return probe */
	}
	d->fps = fpu->fpstate;
	d->t0 = rdtsc_ordered(); /* last */
	return 0;
}

static int csf_fpu_save_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	u64 t1 = rdtsc_ordered(); /* first */
	struct csf_fpu_ri *d = (void *)ri->data;

	trace_x86_fpu_latency_xsave(csf_fpu_live_ns(&csf_fpu_save, t1 - d->t0), d->fps->xfeatures,
				    d->fps->regs.xsave.header.xfeatures);
	this_cpu_inc(csf_fpu_counts[0].timed);
	return 0;
}

/* restore_fpregs_from_fpstate(struct fpstate *fpstate, u64 mask) */
static int csf_fpu_rstor_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct csf_fpu_ri *d = (void *)ri->data;
	struct fpstate *fps = (struct fpstate *)regs_get_kernel_argument(regs, 0);

	if (!csf_fpu_timed_caller(&csf_fpu_rstor, regs)) {
		this_cpu_inc(csf_fpu_counts[1].other);
		return 1;
	}
	d->rfbm = fps->xfeatures;
	d->xinuse = fps->regs.xsave.header.xfeatures;
	d->t0 = rdtsc_ordered(); /* last */
	return 0;
}

static int csf_fpu_rstor_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	u64 t1 = rdtsc_ordered(); /* first */
	struct csf_fpu_ri *d = (void *)ri->data;

	trace_x86_fpu_latency_xrstor(csf_fpu_live_ns(&csf_fpu_rstor, t1 - d->t0), d->rfbm,
				     d->xinuse);
	this_cpu_inc(csf_fpu_counts[1].timed);
	return 0;
}

static struct csf_fpu_probe csf_fpu_save = {
	.func = "save_fpregs_to_fpstate",
	.caller = "__switch_to",
	.save = true,
	.lock = __RAW_SPIN_LOCK_UNLOCKED(csf_fpu_save.lock),
};

static struct csf_fpu_probe csf_fpu_rstor = {
	.func = "restore_fpregs_from_fpstate",
	.caller = "switch_fpu_return",
	.lock = __RAW_SPIN_LOCK_UNLOCKED(csf_fpu_rstor.lock),
};

/* Arm a probe: measure what probing costs, then attach to the kernel's function. */
static int csf_fpu_arm(struct csf_fpu_probe *p)
{
	int err = -ENODEV;

	mutex_lock(&csf_fpu_lock);
	if (!csf_fpu_ready)
		goto out; /* loading or unloading */
	err = -EOPNOTSUPP;
	if (!boot_cpu_has(X86_FEATURE_XSAVE) || !boot_cpu_has(X86_FEATURE_OSXSAVE))
		goto out; /* the events are about XSAVE and XRSTOR */
	/*
	 * Perf calls this before it checks the opener's permissions (a CPU-wide event), and lets
	 * anyone open a tracepoint on their own tasks with exclude_kernel at perf_event_paranoid
	 * 2: the probes' calibration and the probes on every switch of the machine are the
	 * capable's, as the fpu file is.
	 */
	err = -EPERM;
	if (!perfmon_capable())
		goto out;
	err = 0;
	if (p->armed)
		goto out;
	err = csf_fpu_probe_overhead(&csf_fpu_arm_calib, csf_fpu_calib_buf, CSF_FPU_CALIB, &p->ov,
				     &p->calib_ftrace);
	if (err)
		goto out;
	p->overhead = p->ov.p50;
	memset(&p->rp, 0, sizeof(p->rp));
	p->rp.kp.symbol_name = p->func;
	p->rp.entry_handler = p->save ? csf_fpu_save_entry : csf_fpu_rstor_entry;
	p->rp.handler = p->save ? csf_fpu_save_ret : csf_fpu_rstor_ret;
	p->rp.data_size = sizeof(struct csf_fpu_ri);
	err = register_kretprobe(&p->rp);
	if (err)
		goto out;
	p->ftrace = kprobe_ftrace(&p->rp.kp);
	p->armed = true;
out:
	p->error = err;
	mutex_unlock(&csf_fpu_lock);
	if (err && err != -EPERM) /* not for whoever tries */
		pr_info_ratelimited("cannot time %s for csf_fpu events: %d\n", p->func, err);
	return err;
}

static void csf_fpu_disarm_locked(struct csf_fpu_probe *p)
{
	if (!p->armed)
		return;
	unregister_kretprobe(&p->rp); /* waits until no handler runs */
	p->nmissed = p->rp.nmissed;
	p->armed = false;
}

static void csf_fpu_disarm(struct csf_fpu_probe *p)
{
	mutex_lock(&csf_fpu_lock);
	csf_fpu_disarm_locked(p);
	mutex_unlock(&csf_fpu_lock);
}

int csf_fpu_save_reg(void)
{
	return csf_fpu_arm(&csf_fpu_save);
}

void csf_fpu_save_unreg(void)
{
	csf_fpu_disarm(&csf_fpu_save);
}

int csf_fpu_rstor_reg(void)
{
	return csf_fpu_arm(&csf_fpu_rstor);
}

void csf_fpu_rstor_unreg(void)
{
	csf_fpu_disarm(&csf_fpu_rstor);
}

/*
 * /sys/kernel/debug/coarse_stat_fs/fpu_live (root only): the probes' state, one line per
 * probe. Not there without debugfs: the events work without it.
 */
static void csf_fpu_live_show_probe(struct seq_file *m, struct csf_fpu_probe *p, int idx)
{
	u64 timed = 0, other = 0;
	unsigned int i, n;
	int cpu;

	for_each_possible_cpu(cpu) {
		timed += per_cpu(csf_fpu_counts[idx].timed, cpu);
		other += per_cpu(csf_fpu_counts[idx].other, cpu);
	}
	seq_printf(m, "%s: %s", p->save ? "xsave" : "xrstor", p->armed ? "on" : "off");
	if (p->error)
		seq_printf(m, " (last arming failed: %d)", p->error);
	seq_printf(m, "; %s from %s; timed %llu, other callers %llu", p->func, p->caller, timed,
		   other);
	if (p->armed || p->ov.n)
		seq_printf(m, "; probe cost %llu cycles (p99 %u) subtracted, %s%s", p->overhead,
			   p->ov.p99, p->ftrace ? "ftrace" : "int3",
			   p->ftrace == p->calib_ftrace ? "" : " (calibrated otherwise)");
	seq_printf(m, "; missed %d; callers:", p->armed ? p->rp.nmissed : p->nmissed);
	n = smp_load_acquire(&p->ncallers); /* pairs with csf_fpu_learn_caller() */
	for (i = 0; i < n; i++)
		seq_printf(m, " %ps%s", (void *)p->callers[i].addr, p->callers[i].timed ? "*" : "");
	seq_putc(m, '\n');
}

static int csf_fpu_live_show(struct seq_file *m, void *v)
{
	mutex_lock(&csf_fpu_lock);
	csf_fpu_live_show_probe(m, &csf_fpu_save, 0);
	csf_fpu_live_show_probe(m, &csf_fpu_rstor, 1);
	mutex_unlock(&csf_fpu_lock);
	return 0;
}

DEFINE_SHOW_ATTRIBUTE(csf_fpu_live);

static struct dentry *csf_fpu_live_file;

void csf_fpu_init(void)
{
	mutex_lock(&csf_fpu_lock);
	csf_fpu_ready = true;
	mutex_unlock(&csf_fpu_lock);
	/* Without debugfs an error pointer, which debugfs_remove() ignores: nothing to check. */
	csf_fpu_live_file =
		debugfs_create_file("fpu_live", 0400, csf_debugfs, NULL, &csf_fpu_live_fops);
	if (!IS_ENABLED(CONFIG_KRETPROBES))
		pr_info("no kretprobes in this kernel: the csf_fpu events will not arm\n");
}

/* Events still enabled are switched off after this, when their module goes: disarm now. */
void csf_fpu_exit(void)
{
	debugfs_remove(csf_fpu_live_file); /* waits for its readers */
	csf_fpu_live_file = NULL;
	mutex_lock(&csf_fpu_lock);
	csf_fpu_ready = false;
	csf_fpu_disarm_locked(&csf_fpu_save);
	csf_fpu_disarm_locked(&csf_fpu_rstor);
	mutex_unlock(&csf_fpu_lock);
}
