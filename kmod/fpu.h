/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coarse_stat_fs: the FPU latency measurement's parts: the calibrated run and the fpu file
 * (fpu.c), the live probes and their check against the run (fpu_live.c, fpu_trace.h), the
 * instructions both time (fpu_insn.h).
 */
#ifndef CSF_FPU_H
#define CSF_FPU_H

#include <linux/compiler.h>
#include <linux/types.h>
#include <asm/fpu/api.h>
#include <asm/fpu/xcr.h>
#include <asm/special_insns.h>

#include "fpu_insn.h"

#define CSF_FPU_BATCH 32 /* samples per kernel_fpu_begin(): preemption is off that long */
#define CSF_FPU_NR_XFEATURES 18 /* bits 0 to XFEATURE_XTILE_CFG */
#define CSF_FPU_NR_GROUPS 6 /* of the ladder of RFBMs (csf_fpu_groups) */
#define CSF_FPU_MAX_RUNGS (CSF_FPU_NR_GROUPS + 1)

enum csf_xstate { CSF_XINIT, CSF_XMODIFIED, CSF_XOTHER, CSF_NR_XSTATES };

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

/* fpu.c: the calibrated run */
extern const char *const csf_xop_name[CSF_NR_XOPS];
enum csf_xop csf_kernel_save(void);
void csf_fpu_printf(struct csf_fpu_run *r, const char *fmt, ...) __printf(2, 3);
void csf_fpu_stats(u32 *s, u32 n, struct csf_fpu_stats *st);
/* of the first n samples of r->s, with how many the subtraction of the timer left at 0 */
void csf_fpu_sample_stats(struct csf_fpu_run *r, u32 n, struct csf_fpu_stats *st);
int csf_fpu_pause(struct csf_fpu_run *r);

/* fpu_live.c: the probe check, the run's last rows */
int csf_fpu_probe_check(struct csf_fpu_run *r);

#endif /* CSF_FPU_H */
