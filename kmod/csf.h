/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coarse_stat_fs: what the module's source files share. main.c owns the clock and the
 * filesystem, thread.c the per-thread pages, cpu.c the cpu page, slice_watch.c the long-slice
 * watch, slice_learn.c what the watch learns of the scheduler, slice_report.c the watch's reports
 * (the slices file and its trace events), fpu.c the fpu file, fpu_live.c its live trace events
 * (fpu.h).
 */
#ifndef CSF_H
#define CSF_H

#include <linux/fs.h>
#include <linux/math64.h>
#include <linux/types.h>

#include "../include/uapi/coarse_stat_fs.h"

/* The TSC as the module sees it, fixed at load (main.c). */
struct csf_clock {
	u64 tsc_hz;
	u32 flags; /* CSF_HDR_* */
	u32 cyc2ns_mult, cyc2ns_shift; /* ns = cyc * mult >> shift */
	u32 ns2cyc_mult, ns2cyc_shift; /* cyc = ns * mult >> shift */
	u32 cyc2us_mult, cyc2us_shift; /* us = cyc * mult >> shift */
	u64 step_cyc; /* CSF_TSC_STEP_NS in cycles */
};

extern struct csf_clock csf_clock;

/* /sys/kernel/debug/coarse_stat_fs (main.c); an error pointer without debugfs */
extern struct dentry *csf_debugfs;

void csf_hdr_init(struct csf_hdr *hdr, u16 kind, u32 size);
int csf_mmap_check(struct vm_area_struct *vma, unsigned long size);

/* A seqcount writer for a page that user space reads (see the uapi header for the reader). */
static __always_inline void csf_write_begin(__u32 *seq)
{
	WRITE_ONCE(*seq, *seq + 1);
	smp_wmb(); /* the odd seq is visible before any change; pairs with the reader's rmb */
}

static __always_inline void csf_write_end(__u32 *seq)
{
	smp_wmb(); /* every change is visible before the even seq; pairs with the reader's rmb */
	WRITE_ONCE(*seq, *seq + 1);
}

static __always_inline u64 csf_ns_to_cyc(u64 ns)
{
	return mul_u64_u32_shr(ns, csf_clock.ns2cyc_mult, csf_clock.ns2cyc_shift);
}

static __always_inline u64 csf_cyc_to_us(u64 cyc)
{
	return mul_u64_u32_shr(cyc, csf_clock.cyc2us_mult, csf_clock.cyc2us_shift);
}

/* thread.c */
extern const struct file_operations csf_thread_fops;
int csf_thread_init(void);
void csf_thread_exit(void);

/* slice_watch.c: the long-slice watch */
extern u64 csf_slice_long_cyc; /* slice_warn_us in TSC cycles; 0 while the watch is off */
extern unsigned int slice_warn_us;
extern const struct file_operations csf_slices_fops;
int csf_slice_init(void);
void csf_slice_exit(void);

/* cpu.c */
extern const struct file_operations csf_cpu_fops;
void csf_cpu_init(void);
loff_t csf_cpu_map_size(void);

/* fpu.c, fpu_live.c: XSAVE/XRSTOR latency, x86's; other architectures have no fpu file. */
#ifdef CONFIG_X86_64
#define CSF_HAVE_FPU_FILE 1
extern const struct file_operations csf_fpu_fops;
void csf_fpu_init(void);
void csf_fpu_exit(void);
#else
#define CSF_HAVE_FPU_FILE 0
static inline void csf_fpu_init(void)
{
}

static inline void csf_fpu_exit(void)
{
}
#endif

#endif /* CSF_H */
