/* SPDX-License-Identifier: MIT */
/*
 * coarse_stat_fs.h: read the coarse_stat_fs pages from user space. Header-only, C11 or C++11,
 * Linux on x86-64 or arm64. Copy it into your program, or install it (make install) and include
 * <coarse_stat_fs.h>.
 *
 *	struct csf_snap a, b;
 *	char buf[CSF_DIFF_BUFSZ];
 *
 *	if (csf_thread_snap(&a))		// maps the calling thread's page on first use
 *		perror("csf_thread_snap");	// errno: ENOENT when the filesystem is not mounted
 *	op();
 *	csf_thread_snap(&b);			// no syscall: a copy under a seqcount and a counter read
 *	csf_format_diff(buf, sizeof(buf), &a, &b);
 *	puts(buf);
 *
 * Every function returns -1 and sets errno on failure; see each one for its errno values.
 * The library keeps one mapping per thread (unmapped when the thread exits, remapped in a child
 * after fork()) and one cpu page mapping per process. Threads must not call it between vfork()
 * and exec, as with most of libc. The first call of a thread (or process, for the cpu page)
 * maps a page with open(), mmap() and pthread calls, which are not async-signal-safe: make it
 * outside signal handlers; later calls are safe there (loads, the counter, no locks).
 */
#ifndef COARSE_STAT_FS_LIB_H
#define COARSE_STAT_FS_LIB_H

#if defined(__has_include)
#if __has_include("../include/uapi/coarse_stat_fs.h")
#include "../include/uapi/coarse_stat_fs.h" /* in the source tree */
#else
#include <linux/coarse_stat_fs.h> /* installed */
#endif
#else
#include <linux/coarse_stat_fs.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#elif !defined(__aarch64__)
#error "coarse_stat_fs.h: x86-64 or arm64 only (the module's counters are the TSC or CNTVCT_EL0)"
#endif

#ifndef O_CLOEXEC
#define O_CLOEXEC 02000000 /* hidden by strict -std=c11; its value on x86-64 and arm64 Linux */
#endif

#ifdef __cplusplus
extern "C" {
#define CSF_TLS thread_local
#else
#define CSF_TLS _Thread_local
#endif

#define CSF_LIKELY(x) __builtin_expect(!!(x), 1)
#define CSF_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* One instance per program even when several files include this header. */
#define CSF_SHARED __attribute__((weak))

/* A snapshot of the calling thread's page. Yours to read at leisure: it is a private copy. */
struct csf_snap {
	struct csf_thread_page p; /* the page, with cyc[p.state] brought up to tsc */
	uint64_t tsc; /* counter the snapshot stands for: the buckets add up to tsc - p.start_tsc */
	bool extrapolated; /* cyc[p.state] was brought up to tsc (false: parked or ended) */
};

/*
 * Longest line csf_format_diff() can write, NUL included: six times in ms of up to 18
 * characters and nine 64-bit counters of up to 20 digits (see tests/user/t_format.c).
 */
#define CSF_DIFF_BUFSZ 400

/* Internal state, shared by all files that include this header (weak definitions). */
struct csf__thread_state {
	const struct csf_thread_page *page;
	size_t len;
};
CSF_SHARED CSF_TLS struct csf__thread_state csf__thread;
CSF_SHARED pthread_once_t csf__once = PTHREAD_ONCE_INIT;
CSF_SHARED pthread_key_t csf__key;
CSF_SHARED int csf__once_err;
CSF_SHARED int csf__rdtscp = -1; /* CSF_HDR_RDTSCP of the pages; -1: none mapped yet; x86 */
CSF_SHARED const struct csf_cpu_page *csf__cpu_page; /* mapped once per process */
CSF_SHARED size_t csf__cpu_len;

/* ---- Time ---- */

#if defined(__x86_64__)
/*
 * The TSC, read after every earlier instruction: rdtscp where the module's pages say the CPU
 * has it (CSF_HDR_RDTSCP, learned when the library maps a page), else lfence; rdtsc, which
 * every x86-64 CPU orders the same way. Never CPUID: it faults under CPUID faulting (rr,
 * arch_prctl(ARCH_SET_CPUID)).
 */
static inline uint64_t csf_rdtsc(void)
{
	unsigned int aux;

	if (CSF_LIKELY(__atomic_load_n(&csf__rdtscp, __ATOMIC_RELAXED) > 0))
		return __rdtscp(&aux);
	_mm_lfence();
	return __rdtsc();
}

#define csf__cpu_relax() _mm_pause() /* a macro: the same code as before, even at -O0 */
#else
/*
 * The counter (csf_hdr.counter): on arm64 CNTVCT_EL0, read as the kernel's vDSO reads it. The
 * isb keeps the read from running ahead of earlier instructions (the loads of the page it goes
 * with); the fake dependency after it (arch_counter_enforce_ordering: a load from sp + v - v)
 * keeps later loads, the seqcount's recheck, from running before the read has a value.
 */
static inline uint64_t csf_rdtsc(void)
{
	uint64_t v, tmp;

	/* One statement, so that no compiler puts a spill between the read and its dependency. */
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\t"
			     "eor %1, %0, %0\n\tadd %1, sp, %1\n\tldr xzr, [%1]"
			     : "=r"(v), "=r"(tmp)
			     :
			     : "memory");
	return v;
}

#define csf__cpu_relax() __asm__ __volatile__("yield" : : : "memory") /* as the kernel's */
#endif

/* Cycles to ns with the page's conversion (hdr.cyc2ns_mult/shift, 128-bit product). */
static inline uint64_t csf_cyc_to_ns(const struct csf_hdr *h, uint64_t cyc)
{
	__extension__ typedef unsigned __int128 csf__u128;

	return (uint64_t)(((csf__u128)cyc * h->cyc2ns_mult) >> h->cyc2ns_shift);
}

/* ---- Mapping ---- */

/* Check a mapped page's header: EPROTO when the module speaks another ABI. */
static inline int csf__check_hdr(const struct csf_hdr *h, unsigned int kind, size_t need,
				 size_t len)
{
	if (h->magic != CSF_MAGIC || h->kind != kind || h->abi_version != CSF_ABI_VERSION ||
	    h->size < need || h->size > len) {
		errno = EPROTO;
		return -1;
	}
#if defined(__x86_64__)
	__atomic_store_n(&csf__rdtscp, (h->flags & CSF_HDR_RDTSCP) ? 1 : 0, __ATOMIC_RELAXED);
#endif
	return 0;
}

/* Map FILE read-only; ENOENT when the filesystem is not mounted (or the module not loaded). */
static inline const void *csf__map(const char *file, size_t *len)
{
	char path[sizeof(CSF_MOUNT_POINT) + 16];
	struct stat st;
	void *map;
	int fd, e;

	snprintf(path, sizeof(path), "%s/%s", CSF_MOUNT_POINT, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		e = errno;
		close(fd);
		errno = e;
		return NULL;
	}
	*len = (size_t)st.st_size;
	map = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);
	e = errno;
	close(fd); /* the mapping keeps the file */
	errno = e;
	return map == MAP_FAILED ? NULL : map;
}

/*
 * glibc's registration of thread_local destructors, as C++ and Rust use it: it keeps the
 * registering shared object loaded until the destructor has run, so that a library that
 * includes this header may be dlclose()d while its threads live. Weak: musl (whose dlclose()
 * unloads nothing) and static programs fall back to a pthread key.
 */
extern int __cxa_thread_atexit_impl(void (*dtor)(void *), void *obj, void *dso_symbol)
	__attribute__((weak));
extern void *__dso_handle __attribute__((visibility("hidden")));

static inline void csf__thread_unmap(void *page)
{
	/*
	 * Runs at thread exit; the mapping's last reference goes. A registration inherited over
	 * fork() names the parent's mapping, which the child does not have (VM_DONTCOPY).
	 */
	if (page != csf__thread.page)
		return;
	munmap(page, csf__thread.len);
	csf__thread.page = NULL;
}

static inline void csf__after_fork(void)
{
	/* The child has no copy of the parent's mapping (VM_DONTCOPY): map its own when asked. */
	csf__thread.page = NULL;
	pthread_setspecific(csf__key, NULL); /* nothing for the destructor to unmap */
}

static inline void csf__init_once(void)
{
	csf__once_err = pthread_key_create(&csf__key, csf__thread_unmap);
	if (!csf__once_err)
		csf__once_err = pthread_atfork(NULL, NULL, csf__after_fork);
}

/* First use in a thread: open, map and check the thread's page; NULL with errno on failure. */
static __attribute__((noinline, cold, unused)) const struct csf_thread_page *csf__thread_map(void)
{
	const struct csf_thread_page *page;
	size_t len;

	if (pthread_once(&csf__once, csf__init_once) || csf__once_err) {
		errno = csf__once_err ? csf__once_err : EAGAIN;
		return NULL;
	}
	page = (const struct csf_thread_page *)csf__map(CSF_THREAD_FILE, &len);
	if (!page)
		return NULL;
	if (csf__check_hdr(&page->hdr, CSF_KIND_THREAD, sizeof(*page), len)) {
		munmap((void *)page, len);
		errno = EPROTO;
		return NULL;
	}
	csf__thread.page = page;
	csf__thread.len = len;
	if (!__cxa_thread_atexit_impl ||
	    __cxa_thread_atexit_impl(csf__thread_unmap, (void *)page, &__dso_handle))
		pthread_setspecific(csf__key, (void *)page);
	return page;
}

/* The calling thread's page, mapped on first use; NULL with errno as csf__thread_map(). */
static inline const struct csf_thread_page *csf__thread_page(void)
{
	const struct csf_thread_page *page = csf__thread.page;

	return CSF_LIKELY(page) ? page : csf__thread_map();
}

/* ---- The seqcount reader, as the vDSO reads its data page ---- */

static inline uint32_t csf__read_begin(const uint32_t *seq)
{
	uint32_t s;

	while (CSF_UNLIKELY((s = __atomic_load_n(seq, __ATOMIC_ACQUIRE)) & 1))
		csf__cpu_relax();
	return s;
}

static inline bool csf__read_retry(const uint32_t *seq, uint32_t start)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return CSF_UNLIKELY(__atomic_load_n(seq, __ATOMIC_RELAXED) != start);
}

/* ---- Snapshots ---- */

/*
 * Take a snapshot of a mapped thread page: a copy, the counter read with it (csf_rdtsc()), and
 * the current bucket brought up to that reading. csf_thread_snap() does this with the calling
 * thread's own page; call it directly for a page another thread handed you (a mapping of its
 * thread-self). For another thread's page, extrapolation goes to the bucket it left the CPU in;
 * its next switch-in moves the runqueue part of that time to runq_cyc.
 */
static inline void csf_page_snap(const struct csf_thread_page *page, struct csf_snap *s)
{
	uint32_t seq, state;
	uint64_t tsc, last;

	/* Only loads and the counter read in the loop; a torn copy is thrown away. */
	do {
		seq = csf__read_begin(&page->seq);
		memcpy(&s->p, page, sizeof(s->p));
		tsc = csf_rdtsc();
	} while (csf__read_retry(&page->seq, seq));

	state = s->p.state;
	last = s->p.last_switch_tsc;
	if (CSF_UNLIKELY((s->p.flags & CSF_THREAD_STOPPED) || state >= CSF_NR_STATES)) {
		s->tsc = last;
		s->extrapolated = false;
		return;
	}
	/* A counter behind the page's (another CPU's, unsynchronized) counts as no time at all. */
	if (CSF_UNLIKELY((int64_t)(tsc - last) < 0))
		tsc = last;
	s->p.cyc[state] += tsc - last;
	s->tsc = tsc;
	s->extrapolated = true;
}

/*
 * Take a snapshot of the calling thread's page (see csf_page_snap()). The first call in a thread
 * maps the page (a few syscalls); every later call makes none. Returns 0, or -1 with errno:
 * ENOENT (not mounted), EPROTO (module of another ABI version), or what open() or mmap() set.
 */
static inline int csf_thread_snap(struct csf_snap *s)
{
	const struct csf_thread_page *page = csf__thread_page();

	if (CSF_UNLIKELY(!page))
		return -1;
	csf_page_snap(page, s);
	return 0;
}

/*
 * One bucket of a mapped thread page, brought up to now, in counter cycles (csf_thread_cyc()).
 * A bucket that is not an enum csf_state below CSF_NR_STATES gives 0, with errno EINVAL.
 */
static inline uint64_t csf_page_cyc(const struct csf_thread_page *page, unsigned int bucket)
{
	uint32_t seq, state, flags;
	uint64_t tsc, last, v;

	if (CSF_UNLIKELY(bucket >= CSF_NR_STATES)) {
		errno = EINVAL;
		return 0;
	}
	do {
		seq = csf__read_begin(&page->seq);
		state = page->state;
		flags = page->flags;
		last = page->last_switch_tsc;
		v = page->cyc[bucket];
		tsc = csf_rdtsc();
	} while (csf__read_retry(&page->seq, seq));

	if (state == bucket && !(flags & CSF_THREAD_STOPPED) && (int64_t)(tsc - last) > 0)
		v += tsc - last;
	return v;
}

/*
 * One bucket of the calling thread, brought up to now, in counter cycles: csf_thread_snap() for
 * when one number is enough, such as the thread's CPU time (CSF_ONCPU). It reads five words
 * instead of copying the page. Returns 0, or -1 with errno as csf_thread_snap(), or EINVAL for
 * a bucket that is not an enum csf_state.
 */
static inline int csf_thread_cyc(unsigned int bucket, uint64_t *cyc)
{
	const struct csf_thread_page *page;

	if (CSF_UNLIKELY(bucket >= CSF_NR_STATES)) {
		errno = EINVAL;
		return -1;
	}
	page = csf__thread_page();
	if (CSF_UNLIKELY(!page))
		return -1;
	*cyc = csf_page_cyc(page, bucket);
	return 0;
}

/* ---- Histograms ---- */

/*
 * Copy the histograms of a mapped thread page (struct csf_thread_hist: log2 histograms of
 * on-CPU stretches and runqueue waits, in us, and the count of on-CPU stretches longer than the
 * slice watch's threshold), consistent with each other. They follow the page and are not part
 * of a snapshot, which stays as cheap as it was. Returns 0, or -1 with errno EOPNOTSUPP when
 * the module predates them.
 */
static inline int csf_page_hist(const struct csf_thread_page *page, struct csf_thread_hist *h)
{
	const struct csf_thread_hist *src;
	uint32_t seq;

	if (CSF_UNLIKELY(page->hdr.size < CSF_THREAD_PAGE_SIZE + sizeof(*h))) {
		errno = EOPNOTSUPP;
		return -1;
	}
	src = (const struct csf_thread_hist *)((const char *)page + CSF_THREAD_PAGE_SIZE);
	do {
		seq = csf__read_begin(&page->seq);
		memcpy(h, src, sizeof(*h));
	} while (csf__read_retry(&page->seq, seq));
	return 0;
}

/* The calling thread's histograms (csf_page_hist()); errno as csf_thread_snap(), or EOPNOTSUPP. */
static inline int csf_thread_hist(struct csf_thread_hist *h)
{
	const struct csf_thread_page *page = csf__thread_page();

	if (CSF_UNLIKELY(!page))
		return -1;
	return csf_page_hist(page, h);
}

/* ---- The cpu page ---- */

/* One row of the cpu page, with when it was taken. */
struct csf_cpu_snap {
	struct csf_cpu_row row; /* ns, as /proc/stat counts them; row.cpu says which row */
	uint64_t update_mono_ns; /* CLOCK_MONOTONIC of the refresh the row comes from, ns */
	uint32_t period_us; /* the refresh period then in effect, us */
};

/* First use in the process: map the cpu page; threads racing here keep one mapping. */
static __attribute__((noinline, cold, unused)) const struct csf_cpu_page *csf__cpu_map(void)
{
	const struct csf_cpu_page *page, *old = NULL;
	size_t len;

	page = (const struct csf_cpu_page *)csf__map(CSF_CPU_FILE, &len);
	if (!page)
		return NULL;
	if (csf__check_hdr(&page->hdr, CSF_KIND_CPU, sizeof(*page), len) ||
	    page->row_size < sizeof(struct csf_cpu_row) || page->nr_rows < 2 ||
	    page->hdr.size <
		    offsetof(struct csf_cpu_page, rows) + (size_t)page->nr_rows * page->row_size) {
		munmap((void *)page, len);
		errno = EPROTO;
		return NULL;
	}
	__atomic_store_n(&csf__cpu_len, len, __ATOMIC_RELAXED);
	if (!__atomic_compare_exchange_n(&csf__cpu_page, &old, page, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		munmap((void *)page, len); /* another thread won */
		return old;
	}
	return page;
}

static inline const struct csf_cpu_page *csf__cpu(void)
{
	const struct csf_cpu_page *page = __atomic_load_n(&csf__cpu_page, __ATOMIC_ACQUIRE);

	return CSF_LIKELY(page) ? page : csf__cpu_map();
}

static inline const struct csf_cpu_row *csf__cpu_row(const struct csf_cpu_page *page, int i)
{
	return (const struct csf_cpu_row *)((const char *)page->rows + (size_t)i * page->row_size);
}

/*
 * Copy the sum row (cpu == CSF_CPU_ALL) or one CPU's row of the cpu page. The first call in the
 * process maps the page, which starts the kernel's refresh timer; it runs until the process
 * exits or calls csf_cpu_unmap(). Rows are only as fresh as period_us: c->update_mono_ns says
 * when they were taken. Returns 0, or -1 with errno: ENOENT (not mounted), EINVAL (no such
 * CPU), EPROTO (module of another ABI), or what open() or mmap() set.
 */
static inline int csf_cpu_snap(struct csf_cpu_snap *c, int cpu)
{
	const struct csf_cpu_page *page = csf__cpu();
	const struct csf_cpu_row *row;
	uint32_t seq;

	if (CSF_UNLIKELY(!page))
		return -1;
	if (CSF_UNLIKELY(cpu < CSF_CPU_ALL || cpu >= (int)page->nr_rows - 1)) {
		errno = EINVAL;
		return -1;
	}
	row = csf__cpu_row(page, cpu + 1);
	do {
		seq = csf__read_begin(&page->seq);
		memcpy(&c->row, row, sizeof(c->row));
		c->update_mono_ns = page->update_mono_ns;
		c->period_us = page->period_us;
	} while (csf__read_retry(&page->seq, seq));
	return 0;
}

/*
 * Copy the first n rows of the cpu page from one refresh: rows[0] is the sum, rows[1 + cpu]
 * each CPU. Returns the number of rows copied (at most n, at most csf_cpu_count() + 1), or -1
 * with errno as csf_cpu_snap(), or EINVAL for a negative n. update_mono_ns may be NULL.
 */
static inline int csf_cpu_snap_all(struct csf_cpu_row *rows, int n, uint64_t *update_mono_ns)
{
	const struct csf_cpu_page *page;
	uint64_t t;
	uint32_t seq;
	int i;

	if (CSF_UNLIKELY(n < 0)) {
		errno = EINVAL;
		return -1;
	}
	page = csf__cpu();
	if (CSF_UNLIKELY(!page))
		return -1;
	if (n > (int)page->nr_rows)
		n = (int)page->nr_rows;
	do {
		seq = csf__read_begin(&page->seq);
		for (i = 0; i < n; i++)
			memcpy(&rows[i], csf__cpu_row(page, i), sizeof(rows[i]));
		t = page->update_mono_ns;
	} while (csf__read_retry(&page->seq, seq));
	if (update_mono_ns)
		*update_mono_ns = t;
	return n;
}

/* The number of CPU ids (rows besides the sum), or -1 with errno as csf_cpu_snap(). */
static inline int csf_cpu_count(void)
{
	const struct csf_cpu_page *page = csf__cpu();

	return page ? (int)page->nr_rows - 1 : -1;
}

/*
 * Unmap the cpu page, so that the kernel stops refreshing it once no other process has it
 * open. No thread may be in, or enter, another csf_cpu_*() call meanwhile; a later call maps
 * it again.
 */
static inline void csf_cpu_unmap(void)
{
	const struct csf_cpu_page *page =
		__atomic_exchange_n(&csf__cpu_page, NULL, __ATOMIC_ACQ_REL);

	if (page)
		munmap((void *)page, csf__cpu_len);
}

/* ---- Formatting ---- */

/* ns as ms with three decimals, rounded to the microsecond. */
static inline int csf__fmt_ms(char *buf, size_t len, uint64_t ns)
{
	uint64_t us = ns / 1000 + (ns % 1000 >= 500);

	return snprintf(buf, len, "%" PRIu64 ".%03" PRIu64, us / 1000, us % 1000);
}

/*
 * Write where the time between two snapshots of one thread went, as one line:
 *
 * wall 25.119ms = cpu 0.017 + runq 0.000 + sleep 25.102 + dsleep 0.000 + iowait 0.000 |
 * preempt 0 block 1 migrate 0 | flt 4/0 | sysc r0 w0 | io r0B w0B
 *
 * (without the line break): times in ms, switches, minor/major faults, read/write syscalls and
 * the bytes those syscalls read and wrote (rchar, wchar). Returns the line's length. When len is
 * too small, buf holds as much of the line as fits, NUL-terminated, and the call returns -1
 * with errno ENOSPC; CSF_DIFF_BUFSZ always fits. EINVAL: a and b are not snapshots of the same
 * page (another thread, or a reset in between).
 */
static inline int csf_format_diff(char *buf, size_t len, const struct csf_snap *a,
				  const struct csf_snap *b)
{
	const struct csf_hdr *h = &b->p.hdr;
	char t[6][24];
	int n;

	if (a->p.start_tsc != b->p.start_tsc || a->p.tid != b->p.tid) {
		errno = EINVAL;
		return -1;
	}
	csf__fmt_ms(t[0], sizeof(t[0]), csf_cyc_to_ns(h, b->tsc - a->tsc));
	for (int i = 0; i < CSF_NR_STATES; i++)
		csf__fmt_ms(t[i + 1], sizeof(t[i + 1]),
			    csf_cyc_to_ns(h, b->p.cyc[i] - a->p.cyc[i]));

	n = snprintf(
		buf, len,
		"wall %sms = cpu %s + runq %s + sleep %s + dsleep %s + iowait %s"
		" | preempt %" PRIu64 " block %" PRIu64 " migrate %" PRIu64 " | flt %" PRIu64
		"/%" PRIu64 " | sysc r%" PRIu64 " w%" PRIu64 " | io r%" PRIu64 "B w%" PRIu64 "B",
		t[0], t[1], t[2], t[3], t[4], t[5], (uint64_t)(b->p.nr_preempt - a->p.nr_preempt),
		(uint64_t)(b->p.nr_block - a->p.nr_block),
		(uint64_t)(b->p.nr_migrate - a->p.nr_migrate),
		(uint64_t)(b->p.min_flt - a->p.min_flt), (uint64_t)(b->p.maj_flt - a->p.maj_flt),
		(uint64_t)(b->p.syscr - a->p.syscr), (uint64_t)(b->p.syscw - a->p.syscw),
		(uint64_t)(b->p.rchar - a->p.rchar), (uint64_t)(b->p.wchar - a->p.wchar));
	if (n < 0)
		return -1;
	if ((size_t)n >= len) {
		errno = ENOSPC;
		return -1;
	}
	return n;
}

#ifdef __cplusplus
}
#endif

#endif /* COARSE_STAT_FS_LIB_H */
