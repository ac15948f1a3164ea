/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * coarse_stat_fs: the ABI shared by the module and user space.
 *
 * The module's filesystem, mounted at /sys/kernel/coarse_stat_fs, holds four files. Two are
 * read-only pages: each maps (MAP_SHARED, PROT_READ, offset 0, length up to st_size) to a page
 * that starts with struct csf_hdr (docs/interface.md):
 *
 *   thread-self  struct csf_thread_page: where the calling thread's wall time went.
 *   cpu          struct csf_cpu_page: /proc/stat's per-CPU times, refreshed every period_us.
 *
 * Two are root's and return text lines to read() (they do not map). Each text format is
 * described once, in docs/, and nowhere else:
 *
 *   slices       the long-slice watch's reports: docs/slices.md, "The slices file"; its trace
 *                events (csf_slice, csf_slice_end): docs/slices.md, "The trace events".
 *   fpu          XSAVE/XRSTOR latency: docs/fpu.md, "The fpu file"; its trace events
 *                (csf_fpu): docs/fpu.md, "Live, from the kernel's own switches: the csf_fpu
 *                events".
 *
 * Reading protocol (both pages; lib/coarse_stat_fs.h implements it):
 *
 *	do {
 *		while ((seq = load_acquire(&page->seq)) & 1)
 *			cpu_relax();
 *		copy the page (and, for the thread page, read the TSC);
 *		read fence;
 *	} while (load(&page->seq) != seq);
 *
 * The kernel makes seq odd before it changes the page and even again afterwards. Convert,
 * divide and extrapolate only after the loop: a torn copy is discarded, never used.
 *
 * Compatibility: fields are only ever appended, into the reserved space or after the end,
 * and flags and enum values only added. A reader checks magic, kind and abi_version, and that
 * hdr.size covers the fields it uses.
 */
#ifndef _UAPI_COARSE_STAT_FS_H
#define _UAPI_COARSE_STAT_FS_H

#include <linux/types.h>

#define CSF_MAGIC 0x31465343U /* "CSF1" in memory order on little-endian */
#define CSF_ABI_VERSION 1

/* The filesystem: its type name (mount -t), statfs() f_type, mount point and file names. */
#define CSF_FS_TYPE "coarse_stat_fs"
#define CSF_SUPER_MAGIC 0x63736621 /* "!fsc" */
#define CSF_MOUNT_POINT "/sys/kernel/coarse_stat_fs"
#define CSF_THREAD_FILE "thread-self"
#define CSF_CPU_FILE "cpu"
#define CSF_SLICES_FILE "slices" /* root only: the long-slice watch, text (docs/slices.md) */
#define CSF_FPU_FILE "fpu" /* root only: XSAVE/XRSTOR latency, as text (docs/fpu.md) */

/* csf_hdr.kind */
#define CSF_KIND_THREAD 1
#define CSF_KIND_CPU 2

/*
 * csf_hdr.counter: the counter whose ticks the page counts ("cycles", "tsc" in field names),
 * and which a reader reads to bring a bucket up to now. Pages of modules that predate the
 * field hold 0: the TSC.
 */
#define CSF_COUNTER_TSC 0 /* x86-64: the TSC, read with rdtscp (or lfence; rdtsc) */
#define CSF_COUNTER_CNTVCT 1 /* arm64: CNTVCT_EL0, the generic timer's count, after an isb */

/* csf_hdr.flags: properties of this machine, as they were when the page was set up. */
/*
 * The counter ticks at tsc_hz on every CPU, in every power state: constant_tsc and nonstop_tsc,
 * and the kernel has not marked the TSC unstable; on arm64 always (the generic timer is
 * architecturally constant-rate and shared by all CPUs).
 */
#define CSF_HDR_TSC_INVARIANT (1U << 0)
#define CSF_HDR_RDTSCP (1U << 1) /* the CPU has rdtscp (else use lfence; rdtsc); x86-64 only */

/*
 * The first 64 bytes of every page. Written once, when the page is set up; never changes while
 * mapped.
 */
struct csf_hdr {
	__u32 magic; /* CSF_MAGIC */
	__u16 abi_version; /* CSF_ABI_VERSION */
	__u16 kind; /* CSF_KIND_THREAD or CSF_KIND_CPU */
	__u32 size; /* bytes of the page that hold data: the struct, and rows for the cpu page */
	__u32 flags; /* CSF_HDR_* */
	/*
	 * The counter's frequency, Hz: the TSC's as the kernel calibrated it (tsc_khz * 1000), or
	 * the generic timer's as the kernel's arch timer uses it (CNTFRQ_EL0, 1 GHz from Armv8.6
	 * on; 25 MHz, 40 ns a tick, is common before). Fixed while the machine runs.
	 */
	__u64 tsc_hz;
	__u32 cyc2ns_mult; /* ns = (cycles * cyc2ns_mult) >> cyc2ns_shift, in 128-bit arithmetic */
	__u32 cyc2ns_shift;
	__u32 counter; /* CSF_COUNTER_*: the counter tsc_hz and every cycle field are of */
	__u32 __reserved0;
	__u64 __reserved[3];
};

/* csf_thread_page.state, and the index into csf_thread_page.cyc[] */
enum csf_state {
	CSF_ONCPU = 0, /* running on a CPU */
	CSF_RUNQ = 1, /* runnable, waiting for a CPU */
	CSF_SLEEP = 2, /* interruptible sleep: poll, futex, timers, pipes, ... (also TASK_IDLE) */
	CSF_DSLEEP = 3, /* uninterruptible sleep that is not iowait (D state, killable included) */
	CSF_IOWAIT = 4, /* blocked with in_iowait set: waiting for block I/O */
	CSF_NR_STATES = 5,
	/*
	 * Not a bucket: accounting has ended (CSF_THREAD_ENDED). Readers that predate the flag
	 * extrapolate only states below CSF_NR_STATES, so they stop too.
	 */
	CSF_STATE_ENDED = CSF_NR_STATES,
};

/* csf_thread_page.flags */
#define CSF_THREAD_PARKED (1U << 0) /* accounting stopped: docs/interface.md, "The thread page" */
/*
 * Accounting ended for good: the owner exited, or exec'ed a program that gained privileges
 * (setuid, setgid, file capabilities, a security label) or that it may not read. The last
 * stretch is closed, state is CSF_STATE_ENDED, the buckets add up to last_switch_tsc -
 * start_tsc and never change again. The owner's next open of thread-self starts a new page.
 */
#define CSF_THREAD_ENDED (1U << 1)
/* Either: the page is not being brought up to date; readers must not extrapolate. */
#define CSF_THREAD_STOPPED (CSF_THREAD_PARKED | CSF_THREAD_ENDED)

/*
 * The thread page: /sys/kernel/coarse_stat_fs/thread-self.
 *
 * Each thread that opens thread-self gets its own page; all of one thread's descriptors share
 * it. The kernel updates it from preempt notifiers when the thread is switched out and back in,
 * always on the thread's own CPU, under seq.
 *
 * Time is split into five buckets of TSC cycles, which add up exactly to
 * last_switch_tsc - start_tsc. A reader brings the bucket named by state up to the present by
 * adding (rdtsc - last_switch_tsc) to cyc[state]; then the buckets add up to rdtsc - start_tsc.
 * The off-CPU time between a switch-out and the next switch-in is split when the thread comes
 * back: the part the scheduler counted as runqueue wait (sched_info run_delay) goes to runq_cyc,
 * the rest to the bucket chosen when the thread left (sleep, dsleep or iowait; all of it is
 * runqueue wait when the thread was preempted).
 *
 * Counters (nr_preempt to run_delay_ns) are the kernel's own totals for the thread since it
 * started, not since registration: subtract two snapshots. They are only as fresh as the
 * field's "fresh as of" below: a thread that runs without switching does not update them.
 */
struct csf_thread_page {
	struct csf_hdr hdr;

	__u32 seq; /* odd while the kernel writes the page */
	__u32 state; /* enum csf_state: the bucket since last_switch_tsc, or CSF_STATE_ENDED */
	__u64 last_switch_tsc; /* TSC at the last switch in or out (or at start/reset) */
	__u64 start_tsc; /* TSC when accounting started: first open, reset; see tsc_resyncs */

	/* Time buckets, TSC cycles since start_tsc; exact once extrapolated (see above). */
	union {
		struct {
			__u64 oncpu_cyc; /* on a CPU */
			__u64 runq_cyc; /* runnable, waiting for a CPU (preempted or woken) */
			__u64 sleep_cyc; /* interruptible sleep */
			__u64 dsleep_cyc; /* uninterruptible sleep, not iowait */
			__u64 iowait_cyc; /* blocked with in_iowait set */
		};
		__u64 cyc[CSF_NR_STATES]; /* the same, indexed by enum csf_state */
	};

	/* Switches. */
	__u64 nr_preempt; /* involuntary switches (the kernel's nivcsw); fresh as of last switch */
	__u64 nr_block; /* voluntary switches (the kernel's nvcsw); fresh as of last switch */
	__u64 nr_migrate; /* came back on another CPU, counted since start_tsc; last switch in */

	/* Faults and I/O, as /proc/<tid>/stat and /proc/<tid>/io count them; last switch out. */
	__u64 min_flt; /* minor page faults */
	__u64 maj_flt; /* major page faults (needed I/O) */
	__u64 syscr; /* read syscalls (read, pread, readv, ...) */
	__u64 syscw; /* write syscalls */
	__u64 rchar; /* bytes passed to read syscalls, bytes */
	__u64 wchar; /* bytes passed to write syscalls, bytes */
	__u64 read_bytes; /* bytes this thread caused to be fetched from storage */
	__u64 write_bytes; /* bytes this thread caused to be sent to storage */

	/* The scheduler's own view, ns in the sched_clock domain. */
	__u64 sum_exec_ns; /* CPU time (se.sum_exec_runtime); fresh as of last switch out */
	__u64 run_delay_ns; /* runqueue wait (sched_info.run_delay); fresh as of last switch in */

	__u32 cpu; /* CPU the thread last ran on; fresh as of last switch in */
	__u32 tid; /* owner's thread id in the initial PID namespace (docs/caveats.md) */
	__u32 flags; /* CSF_THREAD_*; fresh as of last switch */
	/*
	 * Times the page was resynchronized after the TSC stepped back by more than
	 * CSF_TSC_STEP_NS (resume, unsynchronized TSCs): start_tsc and last_switch_tsc moved back
	 * with it, so two snapshots on either side differ in start_tsc. Fresh as of last switch.
	 */
	__u32 tsc_resyncs;
	/*
	 * The longest on-CPU stretch since start_tsc, TSC cycles; fresh as of last switch out (the
	 * stretch in progress, when state is CSF_ONCPU, is the snapshot's tsc - last_switch_tsc).
	 */
	__u64 max_oncpu_cyc;
};

/* Buckets of the thread page's log2 histograms: [0] is under 2 us, [k] is [2^k, 2^(k+1)) us. */
#define CSF_HIST_BUCKETS 32

/*
 * Follows struct csf_thread_page in the thread page, at offset CSF_THREAD_PAGE_SIZE, when
 * hdr.size covers it; written under the same seq. A snapshot (csf_thread_snap()) does not copy
 * it; csf_thread_hist() does. All counts since start_tsc; fresh as of the last switch.
 */
struct csf_thread_hist {
	/* On-CPU stretches longer than the slice watch's threshold (slice_warn_us, when set). */
	__u64 nr_long_oncpu;
	__u32 long_threshold_us; /* slice_warn_us at the last such stretch (0: none yet) */
	__u32 __reserved0;
	__u64 __reserved1[2];
	__u64 oncpu_us[CSF_HIST_BUCKETS]; /* on-CPU stretches, counted at each switch out */
	__u64 runq_us[CSF_HIST_BUCKETS]; /* runqueue waits before each switch in (may be 0 us) */
};

/* A TSC behind last_switch_tsc by more than this is a step, not skew between CPUs. */
#define CSF_TSC_STEP_NS 10000000ULL /* 10 ms */

/* csf_cpu_row.cpu of the sum row; also the library's "all CPUs" selector */
#define CSF_CPU_ALL (-1)

/*
 * One row of the cpu page: a CPU's times as /proc/stat computes them, in ns rather than
 * USER_HZ ticks (NOHZ idle and iowait included), taken at the page's update_mono_ns.
 */
struct csf_cpu_row {
	__u64 user; /* ns in user mode (guest time included, as in /proc/stat) */
	__u64 nice; /* ns in user mode at positive nice */
	__u64 system; /* ns in kernel mode */
	__u64 idle; /* ns idle */
	__u64 iowait; /* ns idle while a task on this CPU waited for I/O */
	__u64 irq; /* ns in hard interrupts */
	__u64 softirq; /* ns in softirqs */
	__u64 steal; /* ns stolen by the hypervisor */
	__u64 guest; /* ns running a guest (also in user) */
	__u64 guest_nice; /* ns running a niced guest (also in nice) */
	__u32 online; /* 1: online at the last refresh; 0: offline, the row keeps its last values */
	__s32 cpu; /* CPU number, CSF_CPU_ALL for the sum row */
	__u64 __reserved;
};

/*
 * The cpu page: /sys/kernel/coarse_stat_fs/cpu. rows[0] is the sum over all possible CPUs
 * (offline ones with their last values), rows[1 + n] is CPU n, for n < nr_rows - 1. The kernel
 * refreshes every row every period_us while anyone has the file open or mapped; while no one
 * does, it does nothing and the page is not updated.
 */
struct csf_cpu_page {
	struct csf_hdr hdr;

	__u32 seq; /* odd while the kernel writes the page */
	__u32 nr_rows; /* rows that follow: 1 + number of possible CPU ids */
	__u64 update_mono_ns; /* CLOCK_MONOTONIC of the last refresh, ns */
	__u32 period_us; /* the refresh period in effect at the last refresh, us */
	__u32 row_size; /* sizeof(struct csf_cpu_row) as the kernel lays rows out */
	__u64 __reserved[5];

	struct csf_cpu_row rows[];
};

#define CSF_THREAD_PAGE_SIZE 256
#define CSF_CPU_ROW_SIZE 96

#if defined(__cplusplus)
#define CSF_STATIC_ASSERT static_assert
#else
#define CSF_STATIC_ASSERT _Static_assert
#endif
CSF_STATIC_ASSERT(sizeof(struct csf_hdr) == 64, "csf_hdr is 64 bytes");
CSF_STATIC_ASSERT(__builtin_offsetof(struct csf_hdr, counter) == 32, "counter after the mult");
CSF_STATIC_ASSERT(sizeof(struct csf_thread_page) == CSF_THREAD_PAGE_SIZE, "thread page layout");
CSF_STATIC_ASSERT(__builtin_offsetof(struct csf_thread_page, seq) == 64, "seq after hdr");
CSF_STATIC_ASSERT(__builtin_offsetof(struct csf_thread_page, oncpu_cyc) == 88, "buckets");
CSF_STATIC_ASSERT(__builtin_offsetof(struct csf_thread_page, iowait_cyc) == 120, "buckets");
CSF_STATIC_ASSERT(__builtin_offsetof(struct csf_thread_page, run_delay_ns) == 224, "counters");
CSF_STATIC_ASSERT(__builtin_offsetof(struct csf_thread_page, tid) == 236, "ids");
CSF_STATIC_ASSERT(__builtin_offsetof(struct csf_thread_page, tsc_resyncs) == 244, "resyncs");
CSF_STATIC_ASSERT(__builtin_offsetof(struct csf_thread_page, max_oncpu_cyc) == 248, "max");
CSF_STATIC_ASSERT(sizeof(struct csf_thread_hist) == 32 + 16 * CSF_HIST_BUCKETS, "histograms");
CSF_STATIC_ASSERT(sizeof(struct csf_cpu_row) == CSF_CPU_ROW_SIZE, "cpu row layout");
CSF_STATIC_ASSERT(__builtin_offsetof(struct csf_cpu_page, rows) == 128, "rows after 2 lines");
#undef CSF_STATIC_ASSERT

#endif /* _UAPI_COARSE_STAT_FS_H */
