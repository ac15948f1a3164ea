// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: what saving and restoring a task's extended FPU state (XSAVE, XRSTOR and
 * their variants) costs on this CPU, without patching the kernel.
 *
 * 1. The fpu file (root with CAP_PERFMON or CAP_SYS_ADMIN only) runs a calibrated measurement
 *    on the first read() and returns it as text: for each save and restore instruction the CPU
 *    has, each requested-feature bitmap (RFBM) of a ladder that ends with the kernel's task
 *    mask, and each XINUSE state (all components in their init state, or all modified), the
 *    statistics of many samples in TSC cycles. A sample is one instruction between two
 *    serialized TSC reads, interrupts off around it only; the median cost of the empty timer
 *    is subtracted. Everything happens between kernel_fpu_begin() and kernel_fpu_end() (the
 *    task's own registers are saved first and reloaded on the way back to user space), on the
 *    module's buffers, with user components only: no supervisor state, no XFD-armed component,
 *    and PKRU, which the kernel keeps live in the register, is put back before interrupts are
 *    enabled again. A write of "samples=N max_ms=M" before the read sets the sample count and
 *    the time bound; the run yields between batches and ends early on a signal (EINTR) or past
 *    its bound (ETIME).
 *
 * 2. The csf_fpu trace events time the kernel's own save on the context switch
 *    (save_fpregs_to_fpstate() called from __switch_to()) and restore on the way back to user
 *    space (restore_fpregs_from_fpstate() called from switch_fpu_return()), with a kretprobe on
 *    each, armed only while its event is enabled. Calls from elsewhere (kernel_fpu_begin(),
 *    fork, signals, KVM) are told apart by their return address and left untimed. The probes'
 *    own cost is measured on a function of the module when they are armed and subtracted.
 *    The events print what the unmerged series printed (fpu_trace.h), latency in ns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/asm.h>
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/fpu/types.h>
#include <asm/fpu/xcr.h>
#include <asm/processor.h>
#include <asm/special_insns.h>
#include <asm/tsc.h>

#include "compat.h"
#include "csf.h"

#define CREATE_TRACE_POINTS
#include "fpu_trace.h"

#define CSF_FPU_SAMPLES_DEFAULT 1000
#define CSF_FPU_SAMPLES_MAX 100000
#define CSF_FPU_MAX_MS_DEFAULT 10000
#define CSF_FPU_MAX_MS_LIMIT 60000
#define CSF_FPU_BATCH 32 /* samples per kernel_fpu_begin(): preemption is off that long */

/* The components the module knows how to fill with valid data; AMX tile data never (XFD). */
#define CSF_FPU_KNOWN                                                                             \
	(XFEATURE_MASK_FPSSE | XFEATURE_MASK_YMM | XFEATURE_MASK_BNDREGS | XFEATURE_MASK_BNDCSR | \
	 XFEATURE_MASK_AVX512 | XFEATURE_MASK_PKRU | XFEATURE_MASK_XTILE_CFG)
#define CSF_FPU_NR_XFEATURES 18 /* bits 0 to XFEATURE_XTILE_CFG */

/* The ladder of RFBMs: each rung adds the next group the CPU has. */
static const u64 csf_fpu_groups[] = {
	XFEATURE_MASK_FPSSE,  XFEATURE_MASK_YMM,  XFEATURE_MASK_BNDREGS | XFEATURE_MASK_BNDCSR,
	XFEATURE_MASK_AVX512, XFEATURE_MASK_PKRU, XFEATURE_MASK_XTILE_CFG,
};

#define CSF_FPU_MAX_RUNGS (ARRAY_SIZE(csf_fpu_groups) + 1)

enum csf_xop {
	CSF_XSAVE,
	CSF_XSAVEOPT,
	CSF_XSAVEC,
	CSF_XSAVES,
	CSF_XRSTOR,
	CSF_XRSTORS,
	CSF_NR_XOPS,
	CSF_XCONTROL = CSF_NR_XOPS, /* no instruction: the empty timer, as the control row */
};

static const char *const csf_xop_name[CSF_NR_XOPS] = { "XSAVE",	 "XSAVEOPT", "XSAVEC",
						       "XSAVES", "XRSTOR",   "XRSTORS" };

enum csf_xstate { CSF_XINIT, CSF_XMODIFIED, CSF_XOTHER, CSF_NR_XSTATES };

static const char *const csf_state_name[] = { "init", "modified" };

/*
 * One XSAVE-family instruction on buf with RFBM hi:lo; 0, or the trap number of a fault (a #GP
 * from a malformed buffer), which the exception table turns into this value instead of an
 * oops, as in the kernel's own XSTATE_OP().
 */
#define CSF_XOP(insn, buf, lo, hi)                                                      \
	({                                                                              \
		int e_;                                                                 \
		asm volatile("1: " insn " (%[xa])\n\t"                                  \
			     "xor %[e], %[e]\n"                                         \
			     "2:\n\t" _ASM_EXTABLE_TYPE(1b, 2b, EX_TYPE_FAULT_MCE_SAFE) \
			     : [e] "=a"(e_)                                             \
			     : [xa] "D"(buf), "a"(lo), "d"(hi)                          \
			     : "memory");                                               \
		e_;                                                                     \
	})

static __always_inline int csf_xop(enum csf_xop op, void *buf, u64 mask)
{
	u32 lo = mask, hi = mask >> 32;
	int err = -EINVAL;

	switch (op) {
	case CSF_XSAVE:
		err = CSF_XOP("xsave64", buf, lo, hi);
		break;
	case CSF_XSAVEOPT:
		err = CSF_XOP("xsaveopt64", buf, lo, hi);
		break;
	case CSF_XSAVEC:
		err = CSF_XOP("xsavec64", buf, lo, hi);
		break;
	case CSF_XSAVES:
		err = CSF_XOP("xsaves64", buf, lo, hi);
		break;
	case CSF_XRSTOR:
		err = CSF_XOP("xrstor64", buf, lo, hi);
		break;
	case CSF_XRSTORS:
		err = CSF_XOP("xrstors64", buf, lo, hi);
		break;
	default:
		break;
	}
	return err;
}

/* The TSC once every earlier instruction is done, before any later one starts. */
static __always_inline u64 csf_tsc_begin(void)
{
	u32 lo, hi;

	asm volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
	return (u64)hi << 32 | lo;
}

static __always_inline u64 csf_tsc_end(void)
{
	u64 t = rdtsc_ordered(); /* rdtscp (or lfence; rdtsc): after the instruction completes */

	asm volatile("lfence" : : : "memory");
	return t;
}

/* The timer alone, with the same registers loaded as around an instruction. */
static __always_inline u64 csf_timer_timed(void *buf, u64 mask)
{
	u32 lo = mask, hi = mask >> 32;
	u64 t0 = csf_tsc_begin();

	asm volatile("" : : "D"(buf), "a"(lo), "d"(hi) : "memory");
	return csf_tsc_end() - t0;
}

/* Cycles of one instruction; the op is chosen outside the timed window. */
#define CSF_TIMED(insn, buf, lo, hi, err, t)      \
	do {                                      \
		u64 t0_ = csf_tsc_begin();        \
		err = CSF_XOP(insn, buf, lo, hi); \
		t = csf_tsc_end() - t0_;          \
	} while (0)

static __always_inline u64 csf_xop_timed(enum csf_xop op, void *buf, u64 mask, int *errp)
{
	u32 lo = mask, hi = mask >> 32;
	int err = -EINVAL;
	u64 t = 0;

	switch (op) {
	case CSF_XSAVE:
		CSF_TIMED("xsave64", buf, lo, hi, err, t);
		break;
	case CSF_XSAVEOPT:
		CSF_TIMED("xsaveopt64", buf, lo, hi, err, t);
		break;
	case CSF_XSAVEC:
		CSF_TIMED("xsavec64", buf, lo, hi, err, t);
		break;
	case CSF_XSAVES:
		CSF_TIMED("xsaves64", buf, lo, hi, err, t);
		break;
	case CSF_XRSTOR:
		CSF_TIMED("xrstor64", buf, lo, hi, err, t);
		break;
	case CSF_XRSTORS:
		CSF_TIMED("xrstors64", buf, lo, hi, err, t);
		break;
	case CSF_XCONTROL:
		t = csf_timer_timed(buf, mask);
		err = 0;
		break;
	default:
		break;
	}
	*errp = err;
	return t;
}

/*
 * CPUID as the processor answers it, not through paravirt: the layout XSAVE writes is the
 * hardware's.
 */
static void csf_cpuid(u32 leaf, u32 sub, u32 *a, u32 *b, u32 *c, u32 *d)
{
	asm volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "0"(leaf), "2"(sub));
}

#ifdef __clang_analyzer__
/*
 * clang-tidy's analyzer follows paravirt's interrupt operations into PVOP_CALL_ARGS, whose
 * registers initialize themselves ("__edi = __edi"), and reports garbage there. It is shown
 * the native operations; the module is built with the real ones.
 */
#undef local_irq_save
#undef local_irq_restore
static __always_inline void csf_analyzer_irq_restore(unsigned long flags)
{
	if (flags & X86_EFLAGS_IF)
		native_irq_enable();
}

#define local_irq_save(flags) ((flags) = native_save_fl(), native_irq_disable())
#define local_irq_restore(flags) csf_analyzer_irq_restore(flags)
#endif

/* ---- What this CPU and kernel offer ---- */

static bool csf_xop_supported(enum csf_xop op)
{
	if (!boot_cpu_has(X86_FEATURE_XSAVE) || !boot_cpu_has(X86_FEATURE_OSXSAVE))
		return false;
	switch (op) {
	case CSF_XSAVE:
	case CSF_XRSTOR:
		return true;
	case CSF_XSAVEOPT:
		return boot_cpu_has(X86_FEATURE_XSAVEOPT);
	case CSF_XSAVEC:
		return boot_cpu_has(X86_FEATURE_XSAVEC);
	case CSF_XSAVES:
	case CSF_XRSTORS:
		return boot_cpu_has(X86_FEATURE_XSAVES);
	default:
		return false;
	}
}

/* The control row runs as a save does: the state loaded, then the (empty) timed window. */
static bool csf_xop_is_save(enum csf_xop op)
{
	return op <= CSF_XSAVES || op == CSF_XCONTROL;
}

/* The kernel patches in the last of XSAVE, XSAVEOPT, XSAVEC, XSAVES the CPU has (os_xsave()). */
static enum csf_xop csf_kernel_save(void)
{
	enum csf_xop op = CSF_XSAVES;

	while (op > CSF_XSAVE && !csf_xop_supported(op))
		op--;
	return op;
}

static enum csf_xop csf_kernel_restore(void)
{
	return csf_xop_supported(CSF_XRSTORS) ? CSF_XRSTORS : CSF_XRSTOR;
}

/* XRSTOR reads what the kernel's XRSTOR reads: XSAVEC's compacted format when it saves so. */
static bool csf_xrstor_compacted(void)
{
	return csf_kernel_save() == CSF_XSAVEC;
}

/* The save instruction that makes a buffer op can restore. */
static enum csf_xop csf_source_save(enum csf_xop op)
{
	if (op == CSF_XRSTORS)
		return CSF_XSAVES;
	return csf_xrstor_compacted() ? CSF_XSAVEC : CSF_XSAVE;
}

/* The xfeatures the kernel sized the calling task's state for (fpstate->xfeatures). */
static u64 csf_task_xfeatures(void)
{
	return csf_task_fpu(current)->fpstate->xfeatures;
}

/* ---- The calibrated run ---- */

struct csf_fpu_comp {
	u32 size, offset; /* in the standard format */
	bool align64; /* aligned to 64 bytes in the compacted format */
	bool xfd; /* XFD can disable it */
};

struct csf_fpu_stats {
	u32 n, min, max, p50, p99, n97, clamped;
	u64 sum, sum97;
};

struct csf_fpu_run {
	/* The request, from the write before the run. */
	u32 samples, max_ms;
	unsigned long deadline;

	/* The machine. */
	u64 xcr0, task, xfd, measured; /* xfd: the components XFD can disable */
	u64 rungs[CSF_FPU_MAX_RUNGS];
	unsigned int nrungs;
	struct csf_fpu_comp comp[CSF_FPU_NR_XFEATURES];
	u32 pkru;
	bool has_pkru;
	int cpu;
	bool migrated;

	/* Buffers: the three prepared states (standard format), a source to restore, a target. */
	void *mem;
	size_t bufsize;
	void *state[CSF_NR_XSTATES];
	void *src, *dst;

	u32 *s; /* the samples of one row */
	u64 timer; /* median cost of the empty timer, cycles */
	struct csf_fpu_stats timer_st;

	char *out;
	size_t outlen, outsize;
};

static void csf_fpu_printf(struct csf_fpu_run *r, const char *fmt, ...) __printf(2, 3);

static void csf_fpu_printf(struct csf_fpu_run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r->outlen += vscnprintf(r->out + r->outlen, r->outsize - r->outlen, fmt, ap);
	va_end(ap);
}

static int csf_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Statistics as csfcat prints them for trace logs too: nearest-rank p50 and p99, and the 97%
 * cut of the series' script, round(0.97 n) smallest samples.
 */
static void csf_fpu_stats(u32 *s, u32 n, struct csf_fpu_stats *st)
{
	u32 i;

	sort(s, n, sizeof(*s), csf_cmp_u32, NULL);
	st->n = n;
	st->min = s[0];
	st->max = s[n - 1];
	st->p50 = s[(n + 1) / 2 - 1];
	st->p99 = s[div_u64((u64)n * 99 + 99, 100) - 1];
	st->n97 = div_u64((u64)n * 97 + 50, 100);
	st->sum = 0;
	st->sum97 = 0;
	for (i = 0; i < n; i++) {
		st->sum += s[i];
		if (i < st->n97)
			st->sum97 += s[i];
	}
}

/* The statistics of the first n samples, with how many the timer's subtraction left at 0. */
static void csf_fpu_sample_stats(struct csf_fpu_run *r, u32 n, struct csf_fpu_stats *st)
{
	u32 i, clamped = 0;

	for (i = 0; i < n; i++)
		clamped += !r->s[i];
	csf_fpu_stats(r->s, n, st);
	st->clamped = clamped;
}

/* Sizes, offsets and XFD support of the enabled components, from CPUID leaf 0xd. */
static void csf_fpu_read_layout(struct csf_fpu_run *r)
{
	u32 i, eax, ebx, ecx, edx;

	for (i = 2; i < CSF_FPU_NR_XFEATURES; i++) {
		if (!(r->xcr0 & BIT_ULL(i)))
			continue;
		csf_cpuid(0xd, i, &eax, &ebx, &ecx, &edx);
		r->comp[i].size = eax;
		r->comp[i].offset = ebx;
		r->comp[i].align64 = ecx & 2;
		r->comp[i].xfd = ecx & 4;
		if (r->comp[i].xfd)
			r->xfd |= BIT_ULL(i);
	}
}

static size_t csf_fpu_compacted_size(struct csf_fpu_run *r, u64 mask)
{
	size_t size = sizeof(struct fxregs_state) + sizeof(struct xstate_header);
	unsigned int i;

	for (i = 2; i < CSF_FPU_NR_XFEATURES; i++) {
		if (!(mask & BIT_ULL(i)))
			continue;
		if (r->comp[i].align64)
			size = ALIGN(size, 64);
		size += r->comp[i].size;
	}
	return size;
}

/*
 * A register state to load with XRSTOR (standard format): in the init state, every component
 * is marked unused; otherwise every measured component is in use, with a pattern that differs
 * per state. PKRU holds the task's own value and BNDCFGU stays 0 (MPX off for user space).
 */
static void csf_fpu_fill(struct csf_fpu_run *r, struct xregs_state *x, enum csf_xstate state)
{
	u8 seed = 0x11 * (state + 1);
	unsigned int i, j;

	memset(x, 0, r->bufsize);
	x->i387.cwd = 0x37f;
	x->i387.mxcsr = MXCSR_DEFAULT; /* loaded whenever RFBM has SSE or AVX, even in init */
	if (state == CSF_XINIT)
		return;
	x->header.xfeatures = r->measured;
	/* x87: ST0 = R0 = 1.0 + seed, valid (abridged tag bit 0) */
	x->i387.twd = 0x01;
	x->i387.st_space[0] = 0;
	x->i387.st_space[1] = 0x80000000 | seed;
	x->i387.st_space[2] = 0x3fff;
	for (j = 0; j < ARRAY_SIZE(x->i387.xmm_space); j++)
		x->i387.xmm_space[j] = 0x01010101 * (u8)(seed + j);
	for (i = 2; i < CSF_FPU_NR_XFEATURES; i++) {
		u8 *p = (u8 *)x + r->comp[i].offset;

		if (!(r->measured & BIT_ULL(i)))
			continue;
		switch (i) {
		case XFEATURE_PKRU:
			memcpy(p, &r->pkru, sizeof(r->pkru));
			break;
		case XFEATURE_BNDCSR:
			p[8] = 4; /* BNDSTATUS: not zero, so the component is in use */
			break;
		case XFEATURE_XTILE_CFG:
			break; /* palette 0: the only configuration valid without tiles */
		default:
			for (j = 0; j < r->comp[i].size; j++)
				p[j] = seed + j;
		}
	}
}

/* Register state of the given kind into the registers: a plain XRSTOR, standard format. */
static __always_inline int csf_fpu_load(struct csf_fpu_run *r, enum csf_xstate state, u64 mask)
{
	return csf_xop(CSF_XRSTOR, r->state[state], mask);
}

/* Put back what the kernel keeps live in the register and our XRSTOR may have changed. */
static __always_inline void csf_fpu_put_pkru(struct csf_fpu_run *r)
{
	if (r->has_pkru)
		wrpkru(r->pkru);
}

/*
 * Between batches: let others run, stop on a signal or past the bound. Also a quiescent state
 * for RCU Tasks: the kprobe optimizer waits for one from every task while it holds
 * kprobe_mutex, and a run (on a CPU where nothing else wants to run) would otherwise hold up
 * every kprobe registration on the machine, and the csf_fpu events' arming, until it ends.
 */
static int csf_fpu_pause(struct csf_fpu_run *r)
{
	cond_resched_tasks_rcu_qs();
	if (signal_pending(current))
		return -EINTR; /* not restarted: a run is started by a read, not resumed */
	if (time_after(jiffies, r->deadline))
		return -ETIME;
	if (raw_smp_processor_id() != r->cpu)
		r->migrated = true;
	return 0;
}

/*
 * The source of a restore row: state loaded, then saved by the instruction whose format op
 * reads, into a zeroed buffer (XRSTORS wants the header XSAVES writes, and nothing else).
 */
static int csf_fpu_make_source(struct csf_fpu_run *r, enum csf_xop op, u64 mask,
			       enum csf_xstate state)
{
	unsigned long flags;
	int err;

	memset(r->src, 0, r->bufsize);
	kernel_fpu_begin();
	local_irq_save(flags);
	err = csf_fpu_load(r, state, mask);
	if (!err)
		err = csf_xop(csf_source_save(op), r->src, mask);
	csf_fpu_put_pkru(r);
	local_irq_restore(flags);
	kernel_fpu_end();
	return err ? -EIO : 0;
}

/*
 * One row: samples of op with RFBM mask in the given state. A save first loads the state from
 * a prepared buffer, so that the save finds it in the registers and, with XSAVEOPT and XSAVES,
 * not loaded from its own target (no modified optimization: everything in use gets written).
 * A restore first loads the other modified pattern, as the previous task's state.
 */
static int csf_fpu_row(struct csf_fpu_run *r, enum csf_xop op, u64 mask, enum csf_xstate state,
		       u64 *xinuse)
{
	bool save = csf_xop_is_save(op);
	void *buf = save ? r->dst : r->src;
	unsigned long flags;
	u32 i = 0, b;
	int err = 0;

	if (!save) {
		err = csf_fpu_make_source(r, op, mask, state);
		if (err)
			return err;
	}
	while (i < r->samples) {
		kernel_fpu_begin();
		for (b = 0; b < CSF_FPU_BATCH && i < r->samples && !err; b++, i++) {
			u64 t = 0;

			local_irq_save(flags);
			err = csf_fpu_load(r, save ? state : CSF_XOTHER, mask);
			if (!err)
				t = csf_xop_timed(op, buf, mask, &err);
			csf_fpu_put_pkru(r);
			local_irq_restore(flags);
			r->s[i] = t <= r->timer ? 0 : min_t(u64, t - r->timer, U32_MAX);
		}
		kernel_fpu_end();
		if (err)
			return -EIO;
		err = csf_fpu_pause(r);
		if (err)
			return err;
	}
	/* a save writes the bits of RFBM only; the others are what an earlier row left */
	*xinuse = ((struct xregs_state *)buf)->header.xfeatures & mask;
	return 0;
}

/*
 * The cost of the timer itself: the control row's sequence (the state loaded, then the two
 * reads around nothing) with nothing subtracted, so that it is measured as the rows are timed.
 * Timed on its own, without the XRSTOR before it, it read less: under emulation (6.12's guest)
 * the reads cost 63 cycles right after an XRSTOR and 21 without, and the control row read 42.
 */
static int csf_fpu_timer(struct csf_fpu_run *r)
{
	u64 xinuse;
	int err;

	r->timer = 0;
	err = csf_fpu_row(r, CSF_XCONTROL, XFEATURE_MASK_FPSSE, CSF_XINIT, &xinuse);
	if (err)
		return err;
	csf_fpu_stats(r->s, r->samples, &r->timer_st);
	r->timer = r->timer_st.p50;
	return 0;
}

/*
 * The control row: the empty timer through csf_fpu_row() and its subtraction, as a row of
 * its own, "control row n p50 p99 clamped". It times what the subtraction removes, so its
 * samples read 0 wherever they are not above the timer's median: a p50 of 0, half the
 * samples or more clamped (the timer's readings crowd on its minimum). Without the
 * subtraction it would read the timer's own cost, and clamp none, however noisy the rows.
 */
static int csf_fpu_control(struct csf_fpu_run *r)
{
	struct csf_fpu_stats st;
	u64 xinuse;
	int err;

	err = csf_fpu_row(r, CSF_XCONTROL, XFEATURE_MASK_FPSSE, CSF_XINIT, &xinuse);
	if (err)
		return err;
	csf_fpu_sample_stats(r, r->samples, &st);
	csf_fpu_printf(r, "control row %u %u %u %u\n", st.n, st.p50, st.p99, st.clamped);
	return 0;
}

static void csf_fpu_print_row(struct csf_fpu_run *r, enum csf_xop op, u64 mask,
			      enum csf_xstate state, u64 xinuse, const struct csf_fpu_stats *st)
{
	bool kernel = op == csf_kernel_save() || op == csf_kernel_restore();

	csf_fpu_printf(r, "row %s %d 0x%llx %s 0x%llx %u %u %u %llu %u %llu %u %u %u\n",
		       csf_xop_name[op], kernel, mask, csf_state_name[state], xinuse, st->n,
		       st->min, st->max, st->sum, st->n97, st->sum97, st->p50, st->p99,
		       st->clamped);
}

static int csf_fpu_probe_check(struct csf_fpu_run *r);

/* The rows, in the order the table shows them. */
static int csf_fpu_rows(struct csf_fpu_run *r)
{
	enum csf_xop op;
	unsigned int g;
	int state, err;

	for (op = 0; op < CSF_NR_XOPS; op++) {
		if (!csf_xop_supported(op))
			continue;
		for (g = 0; g < r->nrungs; g++) {
			for (state = CSF_XINIT; state <= CSF_XMODIFIED; state++) {
				struct csf_fpu_stats st;
				u64 xinuse;

				err = csf_fpu_row(r, op, r->rungs[g], state, &xinuse);
				if (err)
					return err;
				csf_fpu_sample_stats(r, r->samples, &st);
				csf_fpu_print_row(r, op, r->rungs[g], state, xinuse, &st);
			}
		}
	}
	return 0;
}

/*
 * What is measured: the task's user components the module can fill. A component XFD can
 * disable is left out whatever XFD holds now: restoring it while armed traps with #NM, which
 * is fatal in the kernel (AMX tile data, the only one so far, is not in CSF_FPU_KNOWN either).
 */
static void csf_fpu_ladder(struct csf_fpu_run *r)
{
	u64 rung = 0;
	unsigned int g;

	r->xcr0 = xgetbv(XCR_XFEATURE_ENABLED_MASK);
	r->task = csf_task_xfeatures();
	csf_fpu_read_layout(r);
	r->measured = r->task & r->xcr0 & CSF_FPU_KNOWN & ~r->xfd;
	r->nrungs = 0;
	for (g = 0; g < ARRAY_SIZE(csf_fpu_groups); g++) {
		if (!(r->measured & csf_fpu_groups[g]))
			continue;
		rung |= r->measured & csf_fpu_groups[g];
		r->rungs[r->nrungs++] = rung;
	}
	r->has_pkru = boot_cpu_has(X86_FEATURE_OSPKE) && (r->measured & XFEATURE_MASK_PKRU);
	if (r->has_pkru)
		r->pkru = rdpkru();
}

static void csf_fpu_header(struct csf_fpu_run *r)
{
	enum csf_xop op;

	csf_fpu_printf(r, "csf-fpu 1\ncpu %d\ntsc_khz %llu\ntsc_invariant %d\n", r->cpu,
		       div_u64(csf_clock.tsc_hz, 1000),
		       !!(csf_clock.flags & CSF_HDR_TSC_INVARIANT));
	csf_fpu_printf(r, "xcr0 0x%llx\ntask 0x%llx\nxfd_capable 0x%llx\nmeasured 0x%llx\n",
		       r->xcr0, r->task, r->xfd, r->measured);
	csf_fpu_printf(r, "variants");
	for (op = 0; op < CSF_NR_XOPS; op++)
		if (csf_xop_supported(op))
			csf_fpu_printf(r, " %s", csf_xop_name[op]);
	csf_fpu_printf(r, "\nkernel %s %s\nxrstor_format %s\nsamples %u\n",
		       csf_xop_name[csf_kernel_save()], csf_xop_name[csf_kernel_restore()],
		       csf_xrstor_compacted() ? "compacted" : "standard", r->samples);
}

static int csf_fpu_measure(struct csf_fpu_run *r)
{
	u32 eax, ebx, ecx, edx;
	unsigned int i;
	size_t size;
	int err;

	csf_fpu_ladder(r);
	csf_cpuid(0xd, 0, &eax, &ebx, &ecx, &edx); /* ebx: the standard format's size for XCR0 */
	size = max_t(size_t, ebx, csf_fpu_compacted_size(r, r->measured));
	r->bufsize = ALIGN(size, 64);
	r->mem = vzalloc(r->bufsize * (CSF_NR_XSTATES + 2)); /* page aligned, so each is 64 */
	r->s = vmalloc(array_size(r->samples, sizeof(*r->s)));
	r->outsize = 4096 + CSF_NR_XOPS * r->nrungs * 2 * 128;
	r->out = kvmalloc(r->outsize, GFP_KERNEL);
	if (!r->mem || !r->s || !r->out)
		return -ENOMEM;
	for (i = 0; i < CSF_NR_XSTATES; i++) {
		r->state[i] = r->mem + i * r->bufsize;
		csf_fpu_fill(r, r->state[i], i);
	}
	r->src = r->mem + CSF_NR_XSTATES * r->bufsize;
	r->dst = r->src + r->bufsize;

	r->cpu = raw_smp_processor_id();
	r->deadline = jiffies + msecs_to_jiffies(r->max_ms);
	csf_fpu_header(r);
	err = csf_fpu_timer(r);
	if (err)
		return err;
	csf_fpu_printf(r, "timer %u %u %u\n", r->timer_st.p50, r->timer_st.min, r->timer_st.p99);
	err = csf_fpu_control(r);
	if (err)
		return err;
	err = csf_fpu_rows(r);
	if (err)
		return err;
	err = csf_fpu_probe_check(r);
	if (err)
		return err;
	csf_fpu_printf(r, "migrated %d\nend\n", r->migrated);
	return 0;
}

static void csf_fpu_run_free(struct csf_fpu_run *r)
{
	vfree(r->mem);
	vfree(r->s);
	r->mem = NULL;
	r->s = NULL;
}

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
static int csf_fpu_probe_check(struct csf_fpu_run *r)
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

/* /sys/module/coarse_stat_fs/parameters/fpu_live (root only): the probes' state. */
static int csf_fpu_live_show(char *buf, struct csf_fpu_probe *p, int idx, int len)
{
	u64 timed = 0, other = 0;
	unsigned int i, n;
	int cpu;

	for_each_possible_cpu(cpu) {
		timed += per_cpu(csf_fpu_counts[idx].timed, cpu);
		other += per_cpu(csf_fpu_counts[idx].other, cpu);
	}
	len += sysfs_emit_at(buf, len, "%s: %s", p->save ? "xsave" : "xrstor",
			     p->armed ? "on" : "off");
	if (p->error)
		len += sysfs_emit_at(buf, len, " (last arming failed: %d)", p->error);
	len += sysfs_emit_at(buf, len, "; %s from %s; timed %llu, other callers %llu", p->func,
			     p->caller, timed, other);
	if (p->armed || p->ov.n)
		len += sysfs_emit_at(buf, len, "; probe cost %llu cycles (p99 %u) subtracted, %s%s",
				     p->overhead, p->ov.p99, p->ftrace ? "ftrace" : "int3",
				     p->ftrace == p->calib_ftrace ? "" : " (calibrated otherwise)");
	len += sysfs_emit_at(buf, len,
			     "; missed %d; callers:", p->armed ? p->rp.nmissed : p->nmissed);
	n = smp_load_acquire(&p->ncallers); /* pairs with csf_fpu_learn_caller() */
	for (i = 0; i < n; i++)
		len += sysfs_emit_at(buf, len, " %ps%s", (void *)p->callers[i].addr,
				     p->callers[i].timed ? "*" : "");
	len += sysfs_emit_at(buf, len, "\n");
	return len;
}

static int csf_fpu_live_get(char *buf, const struct kernel_param *kp)
{
	int len;

	mutex_lock(&csf_fpu_lock);
	len = csf_fpu_live_show(buf, &csf_fpu_save, 0, 0);
	len = csf_fpu_live_show(buf, &csf_fpu_rstor, 1, len);
	mutex_unlock(&csf_fpu_lock);
	return len;
}

/* Read only; the events arm the probes. insmod would call .set for "fpu_live=": refuse it. */
static int csf_fpu_live_set(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops csf_fpu_live_ops = {
	.set = csf_fpu_live_set,
	.get = csf_fpu_live_get,
};

module_param_cb(fpu_live, &csf_fpu_live_ops, NULL, 0400);
MODULE_PARM_DESC(fpu_live, "FPU latency probes: armed while csf_fpu events are enabled (read)");

/* ---- The fpu file ---- */

struct csf_fpu_file {
	struct mutex lock; /* the fields below */
	u32 samples, max_ms;
	char *out; /* the result, once run */
	size_t len;
};

static int csf_fpu_open(struct inode *inode, struct file *file)
{
	struct csf_fpu_file *f;

	/* Root's 0600 file: also a capability, as root in a namespace or without it may not. */
	if (!perfmon_capable())
		return -EPERM;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	f->samples = CSF_FPU_SAMPLES_DEFAULT;
	f->max_ms = CSF_FPU_MAX_MS_DEFAULT;
	file->private_data = f;
	return 0;
}

static int csf_fpu_release(struct inode *inode, struct file *file)
{
	struct csf_fpu_file *f = file->private_data;

	kvfree(f->out);
	kfree(f);
	return 0;
}

/* "samples=N" (1..100000) and "max_ms=M" (1..60000), separated by blanks, before the read. */
static ssize_t csf_fpu_write(struct file *file, const char __user *ubuf, size_t count, loff_t *ppos)
{
	struct csf_fpu_file *f = file->private_data;
	u32 samples, max_ms;
	char buf[64], *p, *tok;
	int err = 0;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = 0;
	mutex_lock(&f->lock);
	samples = f->samples;
	max_ms = f->max_ms;
	p = strim(buf);
	while (!err && (tok = strsep(&p, " \t\n"))) {
		if (!*tok)
			continue;
		if (!strncmp(tok, "samples=", 8))
			err = kstrtou32(tok + 8, 10, &samples);
		else if (!strncmp(tok, "max_ms=", 7))
			err = kstrtou32(tok + 7, 10, &max_ms);
		else
			err = -EINVAL;
	}
	if (!err &&
	    (!samples || samples > CSF_FPU_SAMPLES_MAX || !max_ms || max_ms > CSF_FPU_MAX_MS_LIMIT))
		err = -EINVAL;
	if (!err && f->out)
		err = -EBUSY; /* the run is over: open the file again for another */
	if (!err) {
		f->samples = samples;
		f->max_ms = max_ms;
	}
	mutex_unlock(&f->lock);
	return err ? err : count;
}

static ssize_t csf_fpu_read(struct file *file, char __user *ubuf, size_t count, loff_t *ppos)
{
	struct csf_fpu_file *f = file->private_data;
	ssize_t ret;

	if (mutex_lock_interruptible(&f->lock))
		return -EINTR;
	if (!f->out) {
		struct csf_fpu_run *r = kzalloc(sizeof(*r), GFP_KERNEL);
		int err = -ENOMEM;

		if (r) {
			r->samples = f->samples;
			r->max_ms = f->max_ms;
			err = -EOPNOTSUPP;
			if (csf_xop_supported(CSF_XSAVE))
				err = csf_fpu_measure(r);
			csf_fpu_run_free(r);
			if (err) {
				kvfree(r->out);
			} else {
				f->out = r->out;
				f->len = r->outlen;
			}
			kfree(r);
		}
		if (err) {
			mutex_unlock(&f->lock);
			return err;
		}
	}
	ret = simple_read_from_buffer(ubuf, count, ppos, f->out, f->len);
	mutex_unlock(&f->lock);
	return ret;
}

const struct file_operations csf_fpu_fops = {
	.owner = THIS_MODULE,
	.open = csf_fpu_open,
	.release = csf_fpu_release,
	.read = csf_fpu_read,
	.write = csf_fpu_write,
	.llseek = default_llseek,
};

void csf_fpu_init(void)
{
	mutex_lock(&csf_fpu_lock);
	csf_fpu_ready = true;
	mutex_unlock(&csf_fpu_lock);
	if (!IS_ENABLED(CONFIG_KRETPROBES))
		pr_info("no kretprobes in this kernel: the csf_fpu events will not arm\n");
}

/* Events still enabled are switched off after this, when their module goes: disarm now. */
void csf_fpu_exit(void)
{
	mutex_lock(&csf_fpu_lock);
	csf_fpu_ready = false;
	csf_fpu_disarm_locked(&csf_fpu_save);
	csf_fpu_disarm_locked(&csf_fpu_rstor);
	mutex_unlock(&csf_fpu_lock);
}
