/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coarse_stat_fs: what the long-slice watch needs of the architecture (slice_stack_x86.c,
 * slice_stack_arm64.c): a stack from an interrupt's registers, and an NMI that asks a CPU with
 * interrupts off for its own.
 */
#ifndef CSF_SLICE_STACK_H
#define CSF_SLICE_STACK_H

#include <linux/ptrace.h>
#include <linux/types.h>

#include "slice.h"

/* The interrupted context's stack: a user address, or the kernel's frames. regs may be NULL. */
void csf_stack_save(struct csf_stack *st, struct pt_regs *regs);

/* This kernel can send the watch's NMI: x86 always, arm64 never yet (see slice_stack_arm64.c). */
bool csf_nmi_available(void);
/* Route the NMIs csf_nmi_send() sends to csf_slice_nmi(); undo it (waits for a running one). */
int csf_nmi_register(void);
void csf_nmi_unregister(void);
void csf_nmi_send(int cpu);

/* slice_watch.c: an NMI arrived; false when it was not one of the watch's. */
bool csf_slice_nmi(struct pt_regs *regs);

#endif /* CSF_SLICE_STACK_H */
