/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coarse_stat_fs: trace events of the long-slice watch, in tracefs under events/coarse_stat_fs/,
 * for perf, trace-cmd and bpftrace. csf_slice: a slice still running, at the threshold and at
 * 2x, 4x, ...; csf_slice_end: a slice over the threshold has ended. The stack field is an array
 * of addresses, for readers of the raw record (perf and BPF, which need CAP_PERFMON for it). The
 * text form (tracefs's trace files, which root may share with a group) shows only symbols, as
 * the slices file does, and no address: neither the kernel's (KASLR) nor another user's.
 */
/* The layout is the TRACE_EVENT() macros', as in the kernel's own trace headers. */
/* clang-format off */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM coarse_stat_fs

#if !defined(CSF_SLICE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define CSF_SLICE_TRACE_H

#include <linux/tracepoint.h>

#include "slice.h"

#define csf_show_class(c)                                                                         \
	__print_symbolic(c, { CSF_CLASS_UNKNOWN, "unknown" }, { CSF_CLASS_STOP, "stop" },        \
			 { CSF_CLASS_DL, "deadline" }, { CSF_CLASS_RT, "rt" },                   \
			 { CSF_CLASS_FAIR, "fair" }, { CSF_CLASS_EXT, "ext" },                   \
			 { CSF_CLASS_IDLE, "idle" })

DECLARE_EVENT_CLASS(csf_slice_class,

	TP_PROTO(const struct csf_slice_report *r),

	TP_ARGS(r),

	TP_STRUCT__entry(
		__field(u32, cpu)
		__field(pid_t, pid)
		__field(pid_t, tgid)
		__array(char, comm, TASK_COMM_LEN)
		__field(u8, class)
		__field(u32, policy)
		__field(int, rtprio)
		__field(int, nice)
		__field(u64, start_ns)
		__field(u64, len_ns)
		__field(int, waiting)
		__field(u8, user)
		__dynamic_array(unsigned long, stack, r->stack.nr)
		__field(s64, exec_ns)
	),

	TP_fast_assign(
		__entry->cpu = r->cpu;
		__entry->pid = r->pid;
		__entry->tgid = r->tgid;
		memcpy(__entry->comm, r->comm, TASK_COMM_LEN);
		__entry->class = r->class;
		__entry->policy = r->policy;
		__entry->rtprio = r->rtprio;
		__entry->nice = r->nice;
		__entry->start_ns = r->start_ns;
		__entry->len_ns = r->len_ns;
		__entry->waiting = r->waiting;
		__entry->user = r->stack.user;
		memcpy(__get_dynamic_array(stack), r->stack.ip, r->stack.nr * sizeof(unsigned long));
		__entry->exec_ns = r->exec_ns;
	),

	TP_printk("cpu=%u tid=%d tgid=%d comm=%s class=%s policy=%u rtprio=%d nice=%d start_ns=%llu len_ns=%llu waiting=%d user=%u stack=%s exec_ns=%lld",
		  __entry->cpu, __entry->pid, __entry->tgid, __entry->comm,
		  csf_show_class(__entry->class), __entry->policy, __entry->rtprio, __entry->nice,
		  __entry->start_ns, __entry->len_ns, __entry->waiting, __entry->user,
		  csf_trace_stack(p, __get_dynamic_array(stack),
				  __get_dynamic_array_len(stack) / sizeof(unsigned long),
				  __entry->user),
		  __entry->exec_ns)
);

DEFINE_EVENT(csf_slice_class, csf_slice,
	TP_PROTO(const struct csf_slice_report *r),
	TP_ARGS(r)
);

DEFINE_EVENT(csf_slice_class, csf_slice_end,
	TP_PROTO(const struct csf_slice_report *r),
	TP_ARGS(r)
);

#endif /* CSF_SLICE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE slice_trace
#include <trace/define_trace.h>
/* clang-format on */
