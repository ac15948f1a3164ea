/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coarse_stat_fs: the counter the pages count in (csf_hdr.counter), one per architecture: what
 * user space reads without a syscall, as the vDSO does. main.c turns it into csf_clock at load.
 */
#ifndef CSF_CLOCK_H
#define CSF_CLOCK_H

#include <linux/types.h>

#include "../include/uapi/coarse_stat_fs.h"

#if defined(CONFIG_X86_64)
#include <asm/cpufeature.h>
#include <asm/tsc.h>

#define CSF_COUNTER CSF_COUNTER_TSC
#define CSF_COUNTER_NAME "TSC"

/* Ordered after every earlier instruction, as user space reads it (rdtscp, lfence; rdtsc). */
static __always_inline u64 csf_counter_read(void)
{
	return rdtsc_ordered();
}

/* Hz, 0 when the CPU has no usable TSC (the module then refuses to load). */
static inline u64 csf_counter_hz(void)
{
	return boot_cpu_has(X86_FEATURE_TSC) ? (u64)tsc_khz * 1000 : 0;
}

/* CSF_HDR_* that hold for the life of the machine. */
static inline u32 csf_counter_flags(void)
{
	u32 flags = 0;

	if (boot_cpu_has(X86_FEATURE_CONSTANT_TSC) && boot_cpu_has(X86_FEATURE_NONSTOP_TSC))
		flags |= CSF_HDR_TSC_INVARIANT;
	if (boot_cpu_has(X86_FEATURE_RDTSCP))
		flags |= CSF_HDR_RDTSCP;
	return flags;
}

/* The kernel found the TSC unsynchronized or unstable since boot, or was told so. */
static inline bool csf_counter_unstable(void)
{
	return check_tsc_unstable();
}

#elif defined(CONFIG_ARM64)
#include <asm/arch_timer.h>

#define CSF_COUNTER CSF_COUNTER_CNTVCT
#define CSF_COUNTER_NAME "CNTVCT_EL0"

/*
 * CNTVCT_EL0 as the kernel's timekeeping reads it: isb first, a dependency after, and an
 * erratum's workaround where the CPU needs one (whose CPUs trap user space's reads and answer
 * them the same way, so both sides agree).
 */
static __always_inline u64 csf_counter_read(void)
{
	return arch_timer_read_counter();
}

/* CNTFRQ_EL0, which user space reads too (the kernel's own arch_timer_rate is not exported). */
static inline u64 csf_counter_hz(void)
{
	return arch_timer_get_cntfrq();
}

/* The generic timer is architecturally constant-rate and one count for all CPUs. */
static inline u32 csf_counter_flags(void)
{
	return CSF_HDR_TSC_INVARIANT;
}

static inline bool csf_counter_unstable(void)
{
	return false;
}

#else
#error "coarse_stat_fs: no counter for this architecture (x86-64 and arm64 have one)"
#endif

#endif /* CSF_CLOCK_H */
