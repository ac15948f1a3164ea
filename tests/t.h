/* SPDX-License-Identifier: GPL-2.0 */
/*
 * t.h: the tests' framework, in the spirit of kselftest_harness.h. A test program is a list of
 * scenarios, each a function of its own that sets up what it needs, run in the order written:
 *
 *	SCENARIO(sleep_lands_in_sleep, "sleeping lands in sleep_cyc")
 *	{
 *		...
 *		CHECK(cond, "what went wrong: %d", value);	// records a failure, goes on
 *		REQUIRE(cond, "...");				// records a failure, ends the scenario
 *		SKIP("why");					// ends the scenario as skipped
 *	}
 *
 *	int main(void)
 *	{
 *		...setup of the whole program, if any...
 *		return t_main("t_name");
 *	}
 *
 * Output is kselftest's: "ok N name" or "not ok N name", with "#" lines saying what was expected
 * and what was seen. t_main() returns the exit status: 0 when nothing failed, 4 (KSFT_SKIP) when
 * everything was skipped, 1 otherwise.
 *
 * CSF_T_ONLY=PATTERN runs only the scenarios it names: its number N, or words of its name
 * (case-insensitive, "_" for a blank: "fork" or "a_vfork_parent"); the others are left out,
 * and keep their numbers. The harness sets it from a test named "TEST:PATTERN". A scenario
 * holds all it needs, so it runs alone as it runs among the others.
 */
#ifndef CSF_TESTS_T_H
#define CSF_TESTS_T_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strerrorname_np() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/coarse_stat_fs.h"
#include "../tools/util.h"

static int t_nr, t_passed, t_failed, t_skipped;
static int t_cur_failed, t_cur_skipped;
static const char *t_cur_name;

/* Whether CSF_T_ONLY leaves scenario nr, called name, out. */
static inline int t_left_out(int nr, const char *name)
{
	const char *only = getenv("CSF_T_ONLY");
	char want[128], have[256];
	size_t i;

	if (!only || !*only)
		return 0;
	if (strspn(only, "0123456789") == strlen(only))
		return atoi(only) != nr;
	for (i = 0; only[i] && i < sizeof(want) - 1; i++)
		want[i] = only[i] == '_' ? ' ' : only[i];
	want[i] = 0;
	snprintf(have, sizeof(have), "%s", name);
	return !strcasestr(have, want);
}

static int t_ran; /* scenarios run, for CSF_T_ONLY */

static inline int t_begin(const char *name)
{
	if (t_left_out(++t_nr, name))
		return 0;
	t_ran++;
	t_cur_name = name;
	t_cur_failed = 0;
	t_cur_skipped = 0;
	printf("# %d: %s\n", t_nr, name);
	fflush(stdout);
	return 1;
}

static inline void t_end(void)
{
	if (t_cur_failed) {
		t_failed++;
		printf("not ok %d %s\n", t_nr, t_cur_name);
	} else if (t_cur_skipped) {
		t_skipped++;
		printf("ok %d %s # SKIP\n", t_nr, t_cur_name);
	} else {
		t_passed++;
		printf("ok %d %s\n", t_nr, t_cur_name);
	}
	fflush(stdout);
}

/* The scenarios SCENARIO() registered, in the order of their lines in the file. */
struct t_scenario {
	void (*fn)(void);
	const char *name;
	int line;
};

#define T_MAX_SCENARIOS 64
static struct t_scenario t_scenarios[T_MAX_SCENARIOS];
static int t_nscenarios;

static inline void t_register(void (*fn)(void), const char *name, int line)
{
	int i = t_nscenarios;

	if (i == T_MAX_SCENARIOS) {
		printf("# FATAL: more than %d scenarios: raise T_MAX_SCENARIOS\n", T_MAX_SCENARIOS);
		exit(1);
	}
	/*
	 * Constructors of one file run in the order written with today's toolchains, but that is
	 * not a promise (kselftest_harness.h checks it at run time): keep the table sorted by line.
	 */
	for (; i > 0 && t_scenarios[i - 1].line > line; i--)
		t_scenarios[i] = t_scenarios[i - 1];
	t_scenarios[i] = (struct t_scenario){ fn, name, line };
	t_nscenarios++;
}

/*
 * A scenario: a function of its own, registered before main() runs. REQUIRE() and SKIP() return
 * from it; helpers it calls report with CHECK() and return what they found.
 */
#define SCENARIO(fn, name)                                            \
	static void fn(void);                                         \
	static void __attribute__((constructor)) fn##_register_(void) \
	{                                                             \
		t_register(fn, name, __LINE__);                       \
	}                                                             \
	static void fn(void)

static inline void __attribute__((format(printf, 4, 5)))
t_fail_at(const char *file, int line, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("#   FAIL %s:%d: %s: ", file, line, what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	t_cur_failed = 1;
}

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond))                                               \
			t_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)

/* Like CHECK, but a failure ends the scenario (only in the scenario's own function). */
#define REQUIRE(cond, ...)                                                 \
	do {                                                               \
		if (!(cond)) {                                             \
			t_fail_at(__FILE__, __LINE__, #cond, __VA_ARGS__); \
			return;                                            \
		}                                                          \
	} while (0)

/* Compare integers, printing both. */
#define CHECK_EQ(actual, expected)                                              \
	do {                                                                    \
		long long a_ = (long long)(actual), e_ = (long long)(expected); \
		if (a_ != e_)                                                   \
			t_fail_at(__FILE__, __LINE__, #actual " == " #expected, \
				  "expected %lld, got %lld", e_, a_);           \
	} while (0)

/* A call that must fail with errno e: CHECK_ERRNO(open(...), EACCES). */
#define CHECK_ERRNO(call, e)                                                                      \
	do {                                                                                      \
		errno = 0;                                                                        \
		long r_ = (long)(call);                                                           \
		int e_ = errno;                                                                   \
		if (r_ != -1 || e_ != (e))                                                        \
			t_fail_at(__FILE__, __LINE__, #call,                                      \
				  "expected -1 with %s, got %ld with %s", strerrorname_np(e), r_, \
				  e_ ? strerrorname_np(e_) : "errno 0");                          \
	} while (0)

/*
 * Whether this kernel measures time loosely: csf.timing=loose on its command line (the debug
 * suite's kernel, which KASAN, lockdep and full preemption make several times slower under
 * emulation). Checks of how long things took, or that no switch came between two readings,
 * are then printed when they fail, not counted: everything else still is.
 */
static inline int t_timing_loose(void)
{
	static int loose = -1;
	char buf[1024] = "";
	FILE *f;

	if (loose < 0) {
		f = fopen("/proc/cmdline", "r");
		if (f && !fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		if (f)
			fclose(f);
		loose = strstr(buf, "csf.timing=loose") != NULL;
	}
	return loose;
}

/* A check of timing: CHECK, or on a loose kernel only a "#" line when it fails. */
#define CHECK_TIMING(cond, ...)                                                         \
	do {                                                                            \
		if (!t_timing_loose()) {                                                \
			CHECK(cond, __VA_ARGS__);                                       \
		} else if (!(cond)) {                                                   \
			printf("#   timing, not enforced on this kernel: %s: ", #cond); \
			printf(__VA_ARGS__);                                            \
			printf("\n");                                                   \
		}                                                                       \
	} while (0)

/* Ends the scenario as skipped, saying why (only in the scenario's own function). */
#define SKIP(...)                     \
	do {                          \
		printf("#   SKIP: "); \
		printf(__VA_ARGS__);  \
		printf("\n");         \
		t_cur_skipped = 1;    \
		return;               \
	} while (0)

/* Setup that cannot go wrong in a working guest: report and stop the program. */
static inline void __attribute__((noreturn, format(printf, 1, 2))) t_die(const char *fmt, ...)
{
	va_list ap;
	int e = errno;

	printf("# FATAL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (errno %d: %s)\n", e, strerror(e));
	fflush(stdout);
	exit(1);
}

/*
 * Run a shell command, capture its stdout (NUL-terminated), return its exit status or -1,
 * printing nothing: for polling.
 */
static inline int t_run_quiet(const char *cmd, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");
	size_t n;
	int status;

	if (!f)
		t_die("popen %s", cmd);
	n = fread(out, 1, len - 1, f);
	out[n] = 0;
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* t_run_quiet(), and a "#   $ CMD -> STATUS" line. */
static inline int t_run(const char *cmd, char *out, size_t len)
{
	int rc = t_run_quiet(cmd, out, len);

	printf("#   $ %s -> %d\n", cmd, rc);
	return rc;
}

/* Sleep for ns nanoseconds, whatever signals arrive. */
static inline void t_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
			       .tv_nsec = (long)(ns % 1000000000u) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Burn CPU for ns nanoseconds of wall time. */
static inline void t_spin_ns(uint64_t ns)
{
	uint64_t end = mono_ns() + ns;

	while (mono_ns() < end)
		;
}

#define T_NOBODY 65534

/*
 * Run fn as an unprivileged user (nobody, without root's supplementary groups) in a child;
 * returns fn's exit status, or -1 when the child did not exit.
 */
static inline int t_as_nobody(int (*fn)(void))
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		t_die("fork");
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(T_NOBODY) || setuid(T_NOBODY))
			_exit(100);
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Run the calling thread on cpu only, or end the program. */
static inline void t_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		t_die("sched_setaffinity(%d)", cpu);
}

/* A snapshot of the calling thread, or the end of the program. */
static inline void t_snap(struct csf_snap *s)
{
	if (csf_thread_snap(s))
		t_die("csf_thread_snap");
}

/* Where the time between two snapshots went, in ms. */
struct t_diff {
	double wall, cpu, runq, sleep, dsleep, iowait;
};

static inline double t_ms(const struct csf_snap *s, uint64_t cyc)
{
	return (double)csf_cyc_to_ns(&s->p.hdr, cyc) / 1e6;
}

static inline struct t_diff t_diff(const struct csf_snap *a, const struct csf_snap *b)
{
	struct t_diff d = {
		.wall = t_ms(b, b->tsc - a->tsc),
		.cpu = t_ms(b, b->p.oncpu_cyc - a->p.oncpu_cyc),
		.runq = t_ms(b, b->p.runq_cyc - a->p.runq_cyc),
		.sleep = t_ms(b, b->p.sleep_cyc - a->p.sleep_cyc),
		.dsleep = t_ms(b, b->p.dsleep_cyc - a->p.dsleep_cyc),
		.iowait = t_ms(b, b->p.iowait_cyc - a->p.iowait_cyc),
	};
	return d;
}

static inline void t_print_diff(const char *what, const struct csf_snap *a,
				const struct csf_snap *b)
{
	char line[CSF_DIFF_BUFSZ];

	if (csf_format_diff(line, sizeof(line), a, b) < 0)
		snprintf(line, sizeof(line), "(csf_format_diff: %s)", strerror(errno));
	printf("#   %s: %s\n", what, line);
}

/*
 * The module's reference count: +1 for each thread object and each open file (a mapping keeps
 * its file open), so it shows when objects come and go.
 */
static inline int t_module_refs(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/module/coarse_stat_fs/refcnt", "r");

	if (!f || !fgets(buf, sizeof(buf), f))
		t_die("read /sys/module/coarse_stat_fs/refcnt");
	fclose(f);
	return (int)strtol(buf, NULL, 10);
}

/* Wait until the count reaches want (frees after an exit can trail a little); return it. */
static inline int t_module_refs_settle(int want)
{
	int r = t_module_refs();

	for (int i = 0; r != want && i < 200; i++) {
		t_sleep_ns(5000000);
		r = t_module_refs();
	}
	return r;
}

/* Print the summary line and return the exit status. */
static inline int t_done(const char *prog)
{
	const char *only = getenv("CSF_T_ONLY");

	if (only && *only && !t_ran) {
		printf("not ok 0 %s: no scenario matches CSF_T_ONLY=%s\n", prog, only);
		return 1;
	}
	printf("# %s: %d passed, %d failed, %d skipped\n", prog, t_passed, t_failed, t_skipped);
	fflush(stdout);
	if (t_failed)
		return 1;
	return t_passed ? 0 : 4;
}

/* Run the registered scenarios in order, those CSF_T_ONLY leaves in; return the exit status. */
static inline int t_main(const char *prog)
{
	for (int i = 0; i < t_nscenarios; i++) {
		if (!t_begin(t_scenarios[i].name))
			continue;
		t_scenarios[i].fn();
		t_end();
	}
	return t_done(prog);
}

#endif /* CSF_TESTS_T_H */
