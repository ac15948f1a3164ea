// SPDX-License-Identifier: GPL-2.0
/*
 * t_isolated: the long-slice watch and an isolated CPU. Booted with CPU 1 isolated (isolcpus=1
 * nohz_full=1: tests/debian/run.sh gives the test a boot of its own), the watch must run no
 * timer and send no NMI there by default, and still report CPU 1's long slices, from CPU 0,
 * without a stack (stack_via=isolated). With slice_isolated=1, switched while the watch is on,
 * CPU 1 runs its own timer again and reports its slices with their stacks.
 *
 * What the watch does on CPU 1 is counted from the kernel's own books: its timer by the
 * hrtimer_expire_entry events CPU 1 records, its NMIs by CPU 1's NMI count in /proc/interrupts.
 * Skips where CPU 1 is not isolated; fails where the command line asked for it and it is not.
 * Needs root and two CPUs.
 */
#include "../tk.h"
#include "../tslice.h"

#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/prctl.h>

#define MS 1000000ull
#define PARAM "/sys/module/coarse_stat_fs/parameters/"
#define WARN PARAM "slice_warn_us"
#define ISOLATED PARAM "slice_isolated"
#define SLICES CSF_MOUNT_POINT "/" CSF_SLICES_FILE
#define TRACING "/sys/kernel/tracing"
#define EXPIRE TRACING "/events/timer/hrtimer_expire_entry/enable"
#define ROUNDS "/sys/module/csf_selftest/parameters/irqoff_rounds"
#define WAITERS 2

static char buf[1 << 18];

static int set_param(const char *path, unsigned int v)
{
	char s[16];

	snprintf(s, sizeof(s), "%u", v);
	return file_write(path, s);
}

/* A CPU list (such as "1" or "1-3,5") names cpu. */
static bool in_list(const char *path, int cpu)
{
	char s[256];
	int a, b, n;

	if (file_read(path, s, sizeof(s)) <= 0)
		return false;
	for (const char *p = s; sscanf(p, "%d%n", &a, &n) == 1; p += n + 1) {
		b = a;
		if (p[n] == '-' && sscanf(p + n + 1, "%d%n", &b, &n) == 1)
			n += (int)(strchr(p, '-') - p) + 1;
		if (cpu >= a && cpu <= b)
			return true;
		if (p[n] != ',')
			break;
	}
	return false;
}

/* CPU 1's count in the /proc/interrupts row named row ("NMI:"), or -1. */
static long long irq_count(const char *row)
{
	long long c0, c1 = -1;
	char *l;

	if (file_read("/proc/interrupts", buf, sizeof(buf)) <= 0)
		return -1;
	l = strstr(buf, row);
	if (!l || sscanf(l + strlen(row), "%lld %lld", &c0, &c1) != 2)
		return -1;
	return c1;
}

/* The watch's timer expiries CPU 1 recorded since the trace was cleared. */
static int ticks_on_cpu1(void)
{
	int n = 0;

	if (file_read(TRACING "/per_cpu/cpu1/trace", buf, sizeof(buf)) < 0)
		return -1;
	for (char *l = buf; (l = strstr(l, "function=csf_tick")); l++)
		n++;
	return n;
}

static atomic_int waiters_stop;

static void *waiter(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "csf-waiter");
	while (!atomic_load(&waiters_stop))
		;
	return NULL;
}

struct spin {
	int tid, err, waiters;
};

/* SCHED_FIFO on CPU 1 for 300 ms: the waiters cannot split the slice. */
static void *fifo_spin(void *arg)
{
	struct sched_param sp = { .sched_priority = 50 };
	struct spin *s = arg;

	s->tid = gettid();
	prctl(PR_SET_NAME, "csf-isolated");
	s->err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (!s->err)
		t_spin_ns(300 * MS);
	t_sleep_ns(20 * MS); /* the end of the slice */
	return NULL;
}

/* A thread that runs on CPU 1 from its start (the creator runs on CPU 0). */
static void start_on_cpu1(pthread_t *th, void *(*fn)(void *), void *arg)
{
	pthread_attr_t a;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(1, &set);
	if (pthread_attr_init(&a) || pthread_attr_setaffinity_np(&a, sizeof(set), &set) ||
	    pthread_create(th, &a, fn, arg))
		t_die("a thread on CPU 1");
	pthread_attr_destroy(&a);
}

struct seen {
	int running, end, via_isolated, via_other, waiting; /* the spinner's, on CPU 1 */
	bool polled; /* the end report woke a reader in poll() */
};

/*
 * Spin on CPU 1 with the watch on at 50 ms and WAITERS fair tasks behind (if waiters), counting
 * the spinner's reports, read through poll() as they come, until its end report.
 */
static int spin_and_read(struct spin *s, struct seen *e)
{
	int nw = s->waiters < WAITERS ? s->waiters : WAITERS;
	pthread_t w[WAITERS], th;
	char want[32];
	size_t len = 0;
	ssize_t n;
	int fd;

	memset(e, 0, sizeof(*e));
	e->waiting = INT_MIN;
	fd = open(SLICES, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	while (read(fd, buf, sizeof(buf)) > 0) /* what came before */
		;
	atomic_store(&waiters_stop, 0);
	for (int i = 0; i < nw; i++)
		start_on_cpu1(&w[i], waiter, NULL);
	if (nw)
		t_sleep_ns(100 * MS); /* they take turns on CPU 1 */
	start_on_cpu1(&th, fifo_spin, s);
	pthread_join(th, NULL);
	atomic_store(&waiters_stop, 1);
	for (int i = 0; i < nw; i++)
		pthread_join(w[i], NULL);
	snprintf(want, sizeof(want), " cpu=1 tid=%d ", s->tid);
	/* Up to 5 s for the end report: made on CPU 1, whose wakeup CPU 0's timer delivers. */
	for (uint64_t end = mono_ns() + 5000 * MS; mono_ns() < end && len < sizeof(buf) - 1;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 100) <= 0)
			continue;
		while (len < sizeof(buf) - 1 &&
		       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
			len += (size_t)n;
		buf[len] = 0;
		if (strstr(buf, want) && strstr(buf, "event=end")) {
			e->polled = true;
			break;
		}
	}
	buf[len] = 0;
	close(fd);
	if (s->err)
		return -1;
	for (char *l = buf, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
		*nl = 0;
		if (!strstr(l, want))
			continue;
		printf("#   %.300s\n", l);
		if (strstr(l, "event=end")) {
			e->end++;
			continue;
		}
		e->running++;
		if (strstr(l, " stack_via=isolated "))
			e->via_isolated++;
		else
			e->via_other++;
		if (e->waiting == INT_MIN && strstr(l, " waiting="))
			e->waiting = atoi(strstr(l, " waiting=") + 9);
	}
	return 0;
}

/* Interrupts off on CPU 1, 4 ms at a time, for 1.1 s: CPU 1's NMIs meanwhile. */
static long long nmis_with_irqs_off(void)
{
	long long before, after;

	/*
	 * Counted from before the load: the slice's first reports (1, 2, 4 ms...) come while
	 * insmod returns, and the later ones, far apart, CPU 1 may claim itself between rounds.
	 */
	before = irq_count("NMI:");
	if (system("insmod /csf/csf_selftest.ko action=irqoff irq_cpu=1 irq_ms=4"))
		return -1;
	t_sleep_ns(1100 * MS); /* past the reports at 512 ms and 1024 ms too */
	after = irq_count("NMI:");
	system("rmmod csf_selftest");
	printf("#   CPU 1's NMIs: %lld, then %lld\n", before, after);
	return before < 0 || after < 0 ? -1 : after - before;
}

SCENARIO(default_reported_from_cpu0,
	 "by default: CPU 1's slice reported from CPU 0, no timer of the watch on CPU 1")
{
	struct spin s;
	struct seen e;
	int ticks;

	set_param(ISOLATED, 0);
	REQUIRE(set_param(WARN, 50000) == 0, "slice_warn_us=50000: %s", strerror(errno));
	file_write(TRACING "/trace", "");
	REQUIRE(file_write(EXPIRE, "1") == 0, "hrtimer_expire_entry: %s", strerror(errno));
	s = (struct spin){ .waiters = WAITERS };
	REQUIRE(spin_and_read(&s, &e) == 0, "the spinner: %s", strerror(s.err));
	file_write(EXPIRE, "0");
	ticks = ticks_on_cpu1();
	set_param(WARN, 0);
	printf("#   %d running reports (%d stack_via=isolated), %d end; %d expiries of the "
	       "watch's timer on CPU 1\n",
	       e.running, e.via_isolated, e.end, ticks);
	CHECK(e.running > 0, "no running report of the spinner");
	CHECK(e.via_other == 0, "%d running reports with a stack: CPU 1 was interrupted",
	      e.via_other);
	CHECK(e.end == 1, "%d end reports", e.end);
	CHECK(e.polled, "the end report woke no reader within 5 s");
	CHECK(ticks == 0, "the watch's timer ran %d times on CPU 1", ticks);
	CHECK(!e.running || t_waiting_ok(e.waiting, WAITERS), "waiting %d, %d tasks waiting",
	      e.waiting, WAITERS);
}

SCENARIO(default_no_nmi, "by default: no NMI to CPU 1 while its interrupts are off")
{
	long long nmis;

#ifdef __aarch64__
	SKIP("the watch sends no NMI on arm64 (docs/arm64.md)");
#endif
	set_param(ISOLATED, 0);
	REQUIRE(set_param(WARN, 1000) == 0, "slice_warn_us=1000: %s", strerror(errno));
	nmis = nmis_with_irqs_off();
	set_param(WARN, 0);
	REQUIRE(nmis >= 0, "csf_selftest action=irqoff, or /proc/interrupts");
	CHECK(nmis == 0, "%lld NMIs on CPU 1", nmis);
}

SCENARIO(isolated_timer_and_stacks,
	 "slice_isolated=1 while the watch is on: CPU 1 runs its timer, stacks come back")
{
	struct spin s;
	struct seen e;
	int ticks;

	set_param(ISOLATED, 0); /* switched on below, while the watch is on */
	REQUIRE(set_param(WARN, 50000) == 0, "slice_warn_us=50000: %s", strerror(errno));
	REQUIRE(set_param(ISOLATED, 1) == 0, "slice_isolated=1: %s", strerror(errno));
	file_write(TRACING "/trace", "");
	REQUIRE(file_write(EXPIRE, "1") == 0, "hrtimer_expire_entry: %s", strerror(errno));
	s = (struct spin){ .waiters = 0 };
	REQUIRE(spin_and_read(&s, &e) == 0, "the spinner: %s", strerror(s.err));
	file_write(EXPIRE, "0");
	ticks = ticks_on_cpu1();
	printf("#   %d running reports (%d stack_via=isolated), %d end; %d expiries of the "
	       "watch's timer on CPU 1\n",
	       e.running, e.via_isolated, e.end, ticks);
	CHECK(e.running > 0, "no running report of the spinner");
	CHECK(e.via_isolated == 0, "%d reports without a stack", e.via_isolated);
	CHECK(ticks > 0, "the watch's timer never ran on CPU 1");
	CHECK(e.end == 1, "%d end reports", e.end);
}

/* That the NMI count above counts the watch's NMIs: with them on, they come. */
SCENARIO(isolated_nmis, "slice_isolated=1: CPU 1 with interrupts off gets the watch's NMIs")
{
	long long nmis;

#ifdef __aarch64__
	SKIP("the watch sends no NMI on arm64 (docs/arm64.md)");
#endif
	/* As the scenario before leaves them (no-ops after it): the watch on, slice_isolated. */
	REQUIRE(set_param(WARN, 50000) == 0, "slice_warn_us=50000: %s", strerror(errno));
	REQUIRE(set_param(ISOLATED, 1) == 0, "slice_isolated=1: %s", strerror(errno));
	REQUIRE(set_param(WARN, 1000) == 0, "slice_warn_us=1000: %s", strerror(errno));
	nmis = nmis_with_irqs_off();
	REQUIRE(nmis >= 0, "csf_selftest action=irqoff, or /proc/interrupts");
	CHECK(nmis > 0, "no NMI on CPU 1");
	set_param(WARN, 0);
}

int main(void)
{
	bool asked = false;
	char cmdline[4096];
	int rc;

	if (geteuid() != 0) {
		printf("# t_isolated needs root\n");
		return 4;
	}
	if (file_read("/proc/cmdline", cmdline, sizeof(cmdline)) > 0)
		asked = strstr(cmdline, "isolcpus=") || strstr(cmdline, "nohz_full=");
	printf("# isolated: %s; nohz_full: %s\n",
	       in_list("/sys/devices/system/cpu/isolated", 1) ? "1" : "-",
	       in_list("/sys/devices/system/cpu/nohz_full", 1) ? "1" : "-");
	if (!in_list("/sys/devices/system/cpu/isolated", 1) &&
	    !in_list("/sys/devices/system/cpu/nohz_full", 1)) {
		if (asked) {
			printf("not ok 1 CPU 1 is not isolated, though the command line asks for it\n");
			return 1;
		}
		printf("# t_isolated needs CPU 1 isolated (isolcpus=1 nohz_full=1)\n");
		return 4;
	}
	t_pin(0);
	mount("nodev", TRACING, "tracefs", 0, NULL); /* if the guest has not */
	rc = t_main("t_isolated");
	set_param(WARN, 0);
	set_param(ISOLATED, 0);
	file_write(EXPIRE, "0");
	return rc;
}
