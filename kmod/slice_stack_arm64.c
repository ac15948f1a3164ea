// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: the long-slice watch on arm64 (slice_stack.h).
 *
 * Stacks: the frame records from the interrupted frame pointer, read with nofault loads. The
 * kernel's own unwinder takes no registers from a module (arch_stack_walk() is not exported),
 * and every arm64 kernel keeps frame pointers.
 *
 * NMIs: none yet. arm64 has an NMI only as a pseudo-NMI (GICv3 priority masking, with
 * CONFIG_ARM64_PSEUDO_NMI and irqchip.gicv3_pseudo_nmi=1), Debian's kernels are built without
 * it, and the kernel exports no way to send one with a handler of a module's. A CPU with
 * interrupts off is still reported by its neighbour, with stack_via=no-nmi and no stack.
 */
#include <linux/uaccess.h>
#include <asm/pointer_auth.h>

#include "slice_stack.h"

void csf_stack_save(struct csf_stack *st, struct pt_regs *regs)
{
	unsigned long fp, frame[2];

	st->nr = 0;
	st->user = 0;
	if (!regs)
		return;
	st->ip[st->nr++] = instruction_pointer(regs);
	if (user_mode(regs)) {
		st->user = 1;
		return;
	}
	/* Each record is { caller's fp, return address }; a caller's record lies above. */
	for (fp = regs->regs[29]; st->nr < CSF_STACK_DEPTH && fp && IS_ALIGNED(fp, 16);
	     fp = frame[0]) {
		if (copy_from_kernel_nofault(frame, (void *)fp, sizeof(frame)) || !frame[1])
			break;
		st->ip[st->nr++] = ptrauth_strip_kernel_insn_pac(frame[1]);
		if (frame[0] <= fp)
			break;
	}
}

bool csf_nmi_available(void)
{
	return false;
}

int csf_nmi_register(void)
{
	return 0;
}

void csf_nmi_unregister(void)
{
}

void csf_nmi_send(int cpu)
{
	WARN_ON_ONCE(1); /* never called: csf_nmi_available() is false */
}
