// SPDX-License-Identifier: GPL-2.0
/*
 * coarse_stat_fs: the long-slice watch on x86-64: stacks from the ORC unwinder, and the NMI a
 * watcher sends a CPU that takes no interrupts, through the local APIC (slice_stack.h).
 */
#include <linux/uaccess.h>
#include <asm/apic.h>
#include <asm/nmi.h>
#include <asm/unwind.h>

#include "slice_stack.h"

/* The return addresses above regs (ORC unwinder), appended to st. */
static void csf_unwind(struct csf_stack *st, struct pt_regs *regs)
{
	struct unwind_state state;
	unsigned long addr;
	bool first = true;

	for (unwind_start(&state, current, regs, NULL); !unwind_done(&state);
	     unwind_next_frame(&state), first = false) {
		addr = unwind_get_return_address(&state);
		if (!addr || st->nr == CSF_STACK_DEPTH)
			break;
		if (!first || addr != regs->ip) /* the unwinder may begin with regs->ip itself */
			st->ip[st->nr++] = addr;
	}
}

void csf_stack_save(struct csf_stack *st, struct pt_regs *regs)
{
	struct csf_stack more = {};
	struct pt_regs caller;
	unsigned long ret;

	st->nr = 0;
	st->user = 0;
	if (!regs)
		return;
	st->ip[st->nr++] = regs->ip;
	if (user_mode(regs)) {
		st->user = 1;
		return;
	}
	csf_unwind(st, regs);
	/*
	 * Code without unwind data (an indirect-call thunk, say) stops the unwinder at once. It
	 * was entered by a call more often than not: try again from the return address on top of
	 * the stack, and keep what follows only if the unwinder knows that address.
	 */
	if (st->nr > 1 || copy_from_kernel_nofault(&ret, (void *)regs->sp, sizeof(ret)))
		return;
	caller = *regs;
	caller.ip = ret;
	caller.sp = regs->sp + sizeof(ret);
	more.ip[more.nr++] = ret;
	csf_unwind(&more, &caller);
	if (more.nr > 1) {
		memcpy(&st->ip[1], more.ip,
		       min_t(size_t, more.nr, CSF_STACK_DEPTH - 1) * sizeof(more.ip[0]));
		st->nr = 1 + min_t(u8, more.nr, CSF_STACK_DEPTH - 1);
	}
}

bool csf_nmi_available(void)
{
	return true;
}

static int csf_nmi(unsigned int type, struct pt_regs *regs)
{
	return csf_slice_nmi(regs) ? NMI_HANDLED : NMI_DONE;
}

int csf_nmi_register(void)
{
	return register_nmi_handler(NMI_LOCAL, csf_nmi, 0, "csf_slice");
}

void csf_nmi_unregister(void)
{
	unregister_nmi_handler(NMI_LOCAL, "csf_slice"); /* waits for a running handler */
}

void csf_nmi_send(int cpu)
{
	apic->send_IPI(cpu, NMI_VECTOR);
}
