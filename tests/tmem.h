/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tmem.h: a memory workload whose idle times DAMON can be checked against, for the tests of
 * csfcat mem (t_mem) and of its numbers in Prometheus (t_e2e). A child process keeps HOT_MIB
 * written continuously and wrote COLD_MIB once, and counts the bytes its loop writes; a test
 * may define either before it includes this file.
 */
#ifndef CSF_TESTS_TMEM_H
#define CSF_TESTS_TMEM_H

#include "t.h"

#include <sys/mman.h>
#include <unistd.h>

#ifndef HOT_MIB
#define HOT_MIB 64
#endif
#ifndef COLD_MIB
#define COLD_MIB 512
#endif

/* Shared with the workload: bytes its loop has written so far. */
static volatile uint64_t *loop_bytes;
static pid_t wl_pid; /* the workload: 0 until a scenario needs it (need_workload()) */

/*
 * Make the next pass fill the TLB again, as a hardware TLB, a few thousand entries, does on its
 * own. DAMON clears accessed bits without a flush and sees a page accessed only when a TLB fill
 * sets the bit again. The emulator's TLB grows to hold the whole hot set and is flushed only
 * when the guest asks, so a loop on a vCPU that nothing else switched to hid every access from
 * DAMON: trixie-rt's reports read the hot set idle for 11 s at 0 MiB/s (docs/mem.md, "Accesses
 * the TLB hides"). Changing the range's protection flushes this process's TLB entries, all of
 * them where the range is this long.
 */
static inline void drop_translations(char *p, size_t len)
{
#ifndef __aarch64__
	if (mprotect(p, len, PROT_READ) || mprotect(p, len, PROT_READ | PROT_WRITE))
		_exit(1);
#else
	/*
	 * Not on arm64: there the flushes slowed DAMON's clock 9 times (CI: the cold set 1.5 s
	 * idle after 15 s), past what the idle-time checks allow; its looser bounds (t_mem.c)
	 * were set for the misses instead.
	 */
	(void)p;
	(void)len;
#endif
}

static inline void workload(void)
{
	char *hot = mmap(NULL, HOT_MIB << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	char *cold = mmap(NULL, (size_t)COLD_MIB << 20, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (hot == MAP_FAILED || cold == MAP_FAILED)
		_exit(1);
	/*
	 * Small pages: khugepaged would otherwise copy the cold set into huge pages during the
	 * run, which DAMON rightly sees as accesses, and a sample would stand for 2 MiB.
	 */
	madvise(hot, HOT_MIB << 20, MADV_NOHUGEPAGE);
	madvise(cold, (size_t)COLD_MIB << 20, MADV_NOHUGEPAGE);
	memset(cold, 0x5a, (size_t)COLD_MIB << 20);
	for (unsigned int i = 1;; i++) {
		/* Whole pages: DAMON sees pages, so its estimate is of bytes in touched pages. */
		memset(hot, (int)i, HOT_MIB << 20);
		__atomic_store_n(loop_bytes, *loop_bytes + ((uint64_t)HOT_MIB << 20),
				 __ATOMIC_RELEASE);
		drop_translations(hot, HOT_MIB << 20);
	}
}

static inline void start_workload(void)
{
	loop_bytes = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (loop_bytes == MAP_FAILED)
		t_die("mmap");
	wl_pid = fork();
	if (wl_pid < 0)
		t_die("fork");
	if (!wl_pid)
		workload();
	/* The loop counts only after the cold set has been written. */
	while (!__atomic_load_n(loop_bytes, __ATOMIC_ACQUIRE))
		t_sleep_ns(50000000);
	printf("# workload: pid %d, hot %d MiB written continuously, cold %d MiB written once\n",
	       wl_pid, HOT_MIB, COLD_MIB);
}

static inline uint64_t loop_now(void)
{
	return __atomic_load_n(loop_bytes, __ATOMIC_ACQUIRE);
}

/*
 * The workload's scheduling state (R, S, Z...) and the CPU time it has used, in seconds, from
 * /proc/PID/stat; -1 when it cannot be read. A report in which DAMON saw the hot set idle is told
 * apart from a loop that did not run.
 */
static inline double workload_cpu_s(char *state)
{
	const char *st, *ut, *kt;
	char path[64], buf[1024];

	*state = '?';
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)wl_pid);
	if (file_read_value(path, buf, sizeof(buf)))
		return -1;
	st = proc_stat_at(buf, 3);
	ut = proc_stat_at(buf, 14);
	kt = proc_stat_at(buf, 15);
	if (!st || !ut || !kt)
		return -1;
	*state = *st;
	return (strtod(ut, NULL) + strtod(kt, NULL)) / (double)sysconf(_SC_CLK_TCK);
}

/* The workload: started by the first scenario that needs it, and left running to the end. */
static inline pid_t need_workload(void)
{
	int status;

	if (!wl_pid)
		start_workload();
	else if (waitpid(wl_pid, &status, WNOHANG) == wl_pid)
		t_die("the workload (pid %d) ended: %s %d", (int)wl_pid,
		      WIFSIGNALED(status) ? "killed by signal" : "exit status",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return wl_pid;
}

#endif /* CSF_TESTS_TMEM_H */
