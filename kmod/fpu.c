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
 * The live events and the probe check at the end of a run are fpu_live.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/fpu/types.h>
#include <asm/fpu/xcr.h>
#include <asm/processor.h>
#include <asm/special_insns.h>
#include <asm/tsc.h>

#include "compat.h"
#include "csf.h"
#include "fpu.h"

#define CSF_FPU_SAMPLES_DEFAULT 1000
#define CSF_FPU_SAMPLES_MAX 100000
#define CSF_FPU_MAX_MS_DEFAULT 10000
#define CSF_FPU_MAX_MS_LIMIT 60000

/* The components the module knows how to fill with valid data; AMX tile data never (XFD). */
#define CSF_FPU_KNOWN                                                                             \
	(XFEATURE_MASK_FPSSE | XFEATURE_MASK_YMM | XFEATURE_MASK_BNDREGS | XFEATURE_MASK_BNDCSR | \
	 XFEATURE_MASK_AVX512 | XFEATURE_MASK_PKRU | XFEATURE_MASK_XTILE_CFG)

/* The ladder of RFBMs: each rung adds the next group the CPU has. */
static const u64 csf_fpu_groups[CSF_FPU_NR_GROUPS] = {
	XFEATURE_MASK_FPSSE,  XFEATURE_MASK_YMM,  XFEATURE_MASK_BNDREGS | XFEATURE_MASK_BNDCSR,
	XFEATURE_MASK_AVX512, XFEATURE_MASK_PKRU, XFEATURE_MASK_XTILE_CFG,
};

const char *const csf_xop_name[CSF_NR_XOPS] = { "XSAVE",  "XSAVEOPT", "XSAVEC",
						"XSAVES", "XRSTOR",   "XRSTORS" };

static const char *const csf_state_name[] = { "init", "modified" };

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
enum csf_xop csf_kernel_save(void)
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

void csf_fpu_printf(struct csf_fpu_run *r, const char *fmt, ...)
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
void csf_fpu_stats(u32 *s, u32 n, struct csf_fpu_stats *st)
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
void csf_fpu_sample_stats(struct csf_fpu_run *r, u32 n, struct csf_fpu_stats *st)
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

/*
 * Between batches: let others run, stop on a signal or past the bound. Also a quiescent state
 * for RCU Tasks: the kprobe optimizer waits for one from every task while it holds
 * kprobe_mutex, and a run (on a CPU where nothing else wants to run) would otherwise hold up
 * every kprobe registration on the machine, and the csf_fpu events' arming, until it ends.
 */
int csf_fpu_pause(struct csf_fpu_run *r)
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
 * samples read 0 wherever they are not above the timer's median: a p50 of 0 and about half
 * the samples clamped (the timer's readings crowd on its minimum), or a p50 of one step
 * where the counter moves in steps of the timer's minimum. Without the subtraction it would
 * read the timer's own cost, and clamp none, however noisy the rows.
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
