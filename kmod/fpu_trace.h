/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coarse_stat_fs: the live FPU latency events (fpu_live.c).
 *
 * They print exactly what the unmerged kernel series "x86/fpu: Measure the Latency of XSAVE and
 * XRSTOR" printed, event names included, so that its consumer script and trace-cmd read them
 * unchanged. Their system is the module's own: joining the kernel's x86_fpu system would let
 * events/x86_fpu/enable switch them too. Enabling either event arms its probe (the reg/unreg
 * callbacks); with both off nothing is armed.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM csf_fpu

#if !defined(CSF_FPU_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define CSF_FPU_TRACE_H

#include <linux/tracepoint.h>

int csf_fpu_save_reg(void);
void csf_fpu_save_unreg(void);
int csf_fpu_rstor_reg(void);
void csf_fpu_rstor_unreg(void);

/* clang-format off: the layout of the kernel's own trace headers */

/* latency in ns, as the series' trace_clock() differences were; RFBM and XINUSE as it took them */
DECLARE_EVENT_CLASS(csf_fpu_latency, TP_PROTO(u64 latency, u64 rfbm, u64 xinuse),
		    TP_ARGS(latency, rfbm, xinuse),
		    TP_STRUCT__entry(__field(u64, latency) __field(u64, rfbm) __field(u64, xinuse)),
		    TP_fast_assign(__entry->latency = latency; __entry->rfbm = rfbm;
				   __entry->xinuse = xinuse;),
		    TP_printk("x86/fpu: latency:%lld RFBM:0x%llx XINUSE:0x%llx", __entry->latency,
			      __entry->rfbm, __entry->xinuse));

DEFINE_EVENT_FN(csf_fpu_latency, x86_fpu_latency_xsave, TP_PROTO(u64 latency, u64 rfbm, u64 xinuse),
		TP_ARGS(latency, rfbm, xinuse), csf_fpu_save_reg, csf_fpu_save_unreg);

DEFINE_EVENT_FN(csf_fpu_latency, x86_fpu_latency_xrstor,
		TP_PROTO(u64 latency, u64 rfbm, u64 xinuse), TP_ARGS(latency, rfbm, xinuse),
		csf_fpu_rstor_reg, csf_fpu_rstor_unreg);

/* clang-format on */

#endif /* CSF_FPU_TRACE_H */

/* Out of tree: the header is found next to fpu_live.c (CFLAGS_fpu_live.o in Kbuild). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE fpu_trace
#include <trace/define_trace.h>
