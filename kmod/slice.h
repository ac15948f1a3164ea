/* SPDX-License-Identifier: GPL-2.0 */
/*
 * coarse_stat_fs: the long-slice watch's parts: the watch (slice_watch.c), what it learns of the
 * scheduler (slice_learn.c), where its reports go (slice_report.c, slice_trace.h).
 */
#ifndef CSF_SLICE_H
#define CSF_SLICE_H

#include <linux/sched.h>
#include <linux/types.h>

/* Scheduling classes, named from the class a task runs in, never from its policy. */
enum csf_class {
	CSF_CLASS_UNKNOWN,
	CSF_CLASS_STOP,
	CSF_CLASS_DL,
	CSF_CLASS_RT,
	CSF_CLASS_FAIR,
	CSF_CLASS_EXT,
	CSF_CLASS_IDLE,
	CSF_NR_CLASSES,
};

/* How a report's stack was taken. */
enum csf_stack_via {
	CSF_STACK_NONE, /* the end of a slice: nothing to unwind any more */
	CSF_STACK_IRQ, /* the watch's timer interrupted the task on its own CPU */
	CSF_STACK_NMI, /* an NMI, for a CPU that took no timer interrupt */
	/* No stack of that slice: the NMI did not answer in time, or came after a switch. */
	CSF_STACK_LOST,
	/* An isolated CPU, watched from a housekeeping CPU without disturbing it: no stack. */
	CSF_STACK_ISOLATED,
	/* A CPU that took no interrupt, on a kernel with no NMI the watch can send (arm64). */
	CSF_STACK_NO_NMI,
};

enum csf_slice_event {
	CSF_SLICE_RUNNING, /* still on the CPU: at the threshold, then at 2x, 4x, ... */
	CSF_SLICE_END, /* switched out: the slice's whole length */
};

#define CSF_STACK_DEPTH 16

struct csf_stack {
	u8 nr; /* entries in ip[] */
	u8 user; /* ip[0] is a user-space address: the task was in user mode */
	unsigned long ip[CSF_STACK_DEPTH];
};

struct csf_slice_report {
	u64 seq; /* the ring's sequence number */
	u64 start_ns; /* local_clock() when the slice began */
	u64 len_ns; /* its length so far, or in all */
	pid_t pid, tgid;
	char comm[TASK_COMM_LEN];
	int rtprio, nice;
	u32 policy;
	s32 waiting; /* runnable tasks waiting on the CPU; -1 unknown */
	u16 cpu;
	u8 class; /* enum csf_class */
	u8 event; /* enum csf_slice_event */
	u8 stack_via; /* enum csf_stack_via */
	struct csf_stack stack;
	s64 exec_ns; /* the task's own execution time in the slice (sum_exec_runtime); -1 unknown */
};

struct tracepoint;
struct sched_class;

/* slice_report.c: the ring of reports, its file and trace events */
struct trace_seq;

void csf_report(struct csf_slice_report *r);
/* The trace events' text form of a report's stack: symbols, no addresses. */
const char *csf_trace_stack(struct trace_seq *p, const unsigned long *ip, unsigned int n,
			    bool user);
void csf_slices_sync(void);
void csf_slices_tick(void); /* on an online CPU, from the watch's timer */

/* slice_watch.c */
bool csf_slice_cpu_quiet(int cpu); /* isolated: the watch neither interrupts it nor sends NMIs */

/* slice_learn.c */
int csf_learn_sched(struct tracepoint *nr_running_tp); /* once; may sleep */
u8 csf_class_of(const struct sched_class *c); /* enum csf_class */
s32 csf_nr_running(int cpu); /* runnable tasks on cpu's runqueue, -1 unknown */
void csf_rq_start(void); /* the watch is on: learn the runqueues of online CPUs */
void csf_rq_cpu_online(unsigned int cpu); /* and of a CPU that comes online */
void csf_rq_stop(void); /* the watch is off; may sleep */

#endif /* CSF_SLICE_H */
