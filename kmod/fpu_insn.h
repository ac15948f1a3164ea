/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coarse_stat_fs: the instructions the fpu file's run and the live probes' check time
 * (fpu.c, fpu_live.c): the XSAVE family on a buffer, the TSC read around them with fences,
 * CPUID as the hardware answers it.
 */
#ifndef CSF_FPU_INSN_H
#define CSF_FPU_INSN_H

#include <linux/errno.h>
#include <linux/irqflags.h>
#include <linux/types.h>
#include <asm/asm.h>
#include <asm/processor.h>
#include <asm/tsc.h>

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
static inline void csf_cpuid(u32 leaf, u32 sub, u32 *a, u32 *b, u32 *c, u32 *d)
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

#endif /* CSF_FPU_INSN_H */
