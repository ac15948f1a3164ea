// SPDX-License-Identifier: GPL-2.0
/*
 * t_slice: the long-slice watch (slice_warn_us, the slices file, its trace events, csfcat
 * slices) and the thread page's longest stretch and histograms. Needs root and two CPUs.
 *
 * A collector thread on CPU 0 polls the slices file and stamps each report with the
 * CLOCK_MONOTONIC time it arrived and the read that brought it, so that a test can tell a report
 * that came while its subject still ran from one that came after. Timing bounds are loose: the
 * guest is emulated, and the host can keep a vCPU from running for tens of ms.
 */
#include "../tslice.h"
#include "../../tools/json.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/klog.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

#define MS 1000000ull
/*
 * How far a slice's execution time may pass its wall length: the scheduler clock is read at
 * __schedule()'s start, the watch's counter in the tracepoint after the pick, and an
 * emulated vCPU can stall between the two (a single-threaded TCG runs the other vCPU then).
 */
#define EXEC_SLACK (10 * MS)
#define SLICES CSF_MOUNT_POINT "/" CSF_SLICES_FILE
#define WARN "/sys/module/coarse_stat_fs/parameters/slice_warn_us"
#define PRINTK "/sys/module/coarse_stat_fs/parameters/slice_printk"
#define CPU1_ONLINE "/sys/devices/system/cpu/cpu1/online"
#define TRACING "/sys/kernel/tracing"
#define NOBODY 65534
#define MAX_REPORTS 4096

struct report {
	uint64_t arrived; /* CLOCK_MONOTONIC, ns */
	int batch; /* the collector's read that brought it */
	unsigned long long seq, start_ns, len_ns, lost;
	long long exec_ns; /* -2: the line had none */
	int cpu, tid, tgid, rtprio, nice, waiting;
	char event[16], comm[64], class[16], policy[16], via[16], stack[1024];
};

/* The watch's threshold in most scenarios, and its timer's period at that threshold. */
static const uint64_t threshold = 50 * MS, period = 50 * MS / 4;

static struct report reports[MAX_REPORTS];
static atomic_int nreports;
static atomic_int collecting;
static int slices_fd = -1;

static void set_warn(unsigned int us)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", us);
	if (file_write(WARN, v))
		t_die("slice_warn_us=%u", us);
}

static void parse(char *line, uint64_t arrived, int batch)
{
	struct report *r;
	int i = atomic_load(&nreports);

	if (i >= MAX_REPORTS)
		return;
	r = &reports[i];
	memset(r, 0, sizeof(*r));
	r->arrived = arrived;
	r->batch = batch;
	r->exec_ns = -2;
	if (sscanf(line, "lost %llu", &r->lost) != 1)
		sscanf(line,
		       "seq=%llu event=%15s cpu=%d tid=%d tgid=%d comm=%63s class=%15s policy=%15s "
		       "rtprio=%d nice=%d start_ns=%llu len_ns=%llu waiting=%d stack_via=%15s "
		       "stack=%1023s exec_ns=%lld",
		       &r->seq, r->event, &r->cpu, &r->tid, &r->tgid, r->comm, r->class, r->policy,
		       &r->rtprio, &r->nice, &r->start_ns, &r->len_ns, &r->waiting, r->via,
		       r->stack, &r->exec_ns);
	atomic_store(&nreports, i + 1);
}

/* On CPU 0: read every report as it comes. */
static void *collector(void *arg)
{
	static char buf[65536];
	int batch = 0;

	(void)arg;
	t_pin(0);
	while (atomic_load(&collecting)) {
		struct pollfd p = { .fd = slices_fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 5) <= 0)
			continue;
		n = read(slices_fd, buf, sizeof(buf) - 1);
		if (n <= 0)
			continue;
		buf[n] = 0;
		batch++;
		for (char *line = buf, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = 0;
			parse(line, mono_ns(), batch);
		}
	}
	return NULL;
}

static pthread_t collector_thread;

static void collect_start(void)
{
	/* Skip what earlier scenarios left: open afresh and drain. */
	char buf[65536];

	if (slices_fd >= 0)
		close(slices_fd);
	slices_fd = open(SLICES, O_RDONLY | O_NONBLOCK);
	if (slices_fd < 0)
		t_die("open " SLICES);
	while (read(slices_fd, buf, sizeof(buf)) > 0)
		;
	atomic_store(&nreports, 0);
	atomic_store(&collecting, 1);
	pthread_create(&collector_thread, NULL, collector, NULL);
}

static void collect_stop(void)
{
	t_sleep_ns(50 * MS); /* the last reports of the scenario */
	atomic_store(&collecting, 0);
	pthread_join(collector_thread, NULL);
}

/* The first report of tid and event ("running", "end"), or NULL. */
static const struct report *find(int tid, const char *event)
{
	for (int i = 0; i < atomic_load(&nreports); i++) {
		if (reports[i].tid == tid && !strcmp(reports[i].event, event))
			return &reports[i];
	}
	return NULL;
}

static void print_report(const struct report *r)
{
	printf("#   seq %llu %s cpu %d tid %d %s class %s policy %s/%d len %.1f ms exec %.1f ms "
	       "waiting %d stack(%s) %.200s\n",
	       r->seq, r->event, r->cpu, r->tid, r->comm, r->class, r->policy, r->rtprio,
	       r->len_ns / 1e6, r->exec_ns / 1e6, r->waiting, r->via, r->stack);
}

/*
 * The state a scenario starts from among the others, which each sets itself so that it runs
 * alone as it does there: the watch at us (0: off) and, from the stopper's scenario on, this
 * thread on CPU 0, where the threads and children it starts without pinning them run too.
 */
static void start_from(unsigned int us, bool cpu0)
{
	set_warn(us);
	if (cpu0)
		t_pin(0);
}

/* ---- Subjects ---- */

struct spinner {
	int cpu; /* -1: unpinned */
	int policy, prio;
	int tid;
	uint64_t spin_ns;
	const char *name;
	uint64_t began, ended; /* CLOCK_MONOTONIC */
	uint64_t max_gap; /* the longest the spin loop went without running (host stalls) */
	/*
	 * charged: if charge is set, the spin also sums the CPU time the kernel charged the thread
	 * while its loop did not advance (host stalls, interrupts): what can lengthen a fair
	 * slice's execution time past what the scheduler gave it.
	 */
	uint64_t charged;
	pthread_barrier_t *go; /* if set: start spinning together */
	int err;
	bool charge;
};

/* Spin for ns, noting the longest gap between two clock reads: time the vCPU did not run. */
static uint64_t spin_gaps(uint64_t ns)
{
	uint64_t now = mono_ns(), end = now + ns, gap = 0;

	while (now < end) {
		uint64_t t = mono_ns();

		if (t - now > gap)
			gap = t - now;
		now = t;
	}
	return gap;
}

/* The kernel's struct sched_attr (newer C libraries have their own, older ones none). */
struct t_sched_attr {
	uint32_t size, sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
};

static int set_deadline(uint64_t runtime, uint64_t deadline, uint64_t period)
{
	struct t_sched_attr a = { .size = sizeof(a),
				  .sched_policy = SCHED_DEADLINE,
				  .sched_runtime = runtime,
				  .sched_deadline = deadline,
				  .sched_period = period };

	return (int)syscall(SYS_sched_setattr, 0, &a, 0);
}

static uint64_t t_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spin for ns; the CPU time charged in steps of over 0.5 ms, in which the loop did not run. */
static uint64_t spin_charged(uint64_t ns, uint64_t *max_gap)
{
	uint64_t now = mono_ns(), end = now + ns, c = t_thread_cpu_ns(), charged = 0;

	*max_gap = 0;
	while (now < end) {
		uint64_t t = mono_ns(), c2 = t_thread_cpu_ns();

		if (t - now > *max_gap)
			*max_gap = t - now;
		if (c2 - c > MS / 2)
			charged += c2 - c;
		now = t;
		c = c2;
	}
	return charged;
}

static void *spin(void *arg)
{
	struct spinner *s = arg;
	struct sched_param sp = { .sched_priority = s->prio };

	s->tid = gettid();
	prctl(PR_SET_NAME, s->name);
	if (s->cpu >= 0)
		t_pin(s->cpu);
	if (s->policy == SCHED_DEADLINE)
		s->err = set_deadline(100 * MS, 200 * MS, 200 * MS) ? errno : 0;
	else if (s->policy != SCHED_OTHER)
		s->err = pthread_setschedparam(pthread_self(), s->policy, &sp);
	if (s->err)
		return NULL;
	if (s->go)
		pthread_barrier_wait(s->go);
	s->began = mono_ns();
	if (s->charge)
		s->charged = spin_charged(s->spin_ns, &s->max_gap);
	else
		s->max_gap = spin_gaps(s->spin_ns);
	s->ended = mono_ns();
	t_sleep_ns(20 * MS); /* the end of the slice */
	return NULL;
}

static void run_spinner(struct spinner *s)
{
	pthread_t th;

	pthread_create(&th, NULL, spin, s);
	pthread_join(th, NULL);
}

static bool timer_listed(const char *fn)
{
	char line[256];
	bool found = false;
	FILE *f = fopen("/proc/timer_list", "r");

	while (f && fgets(line, sizeof(line), f))
		found |= strstr(line, fn) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* Hits of the kprobe event csf_hits (on the module's sched_switch probe), from kprobe_profile. */
static long probe_hits(void)
{
	char line[256], name[64];
	long hits = -1, h, miss;
	FILE *f = fopen(TRACING "/kprobe_profile", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %ld %ld", name, &h, &miss) == 3 && !strcmp(name, "csf_hits"))
			hits = h;
	if (f)
		fclose(f);
	return hits;
}

/* Context switches on demand: a byte back and forth between two threads, n times. */
static int pp[2][2];

static void *pong(void *arg)
{
	char c;

	(void)arg;
	while (read(pp[0][0], &c, 1) == 1 && c)
		if (write(pp[1][1], &c, 1) != 1)
			break;
	return NULL;
}

static void ping_pong(int n)
{
	pthread_t th;
	char c = 1;

	if (pipe(pp[0]) || pipe(pp[1]))
		t_die("pipe");
	pthread_create(&th, NULL, pong, NULL);
	for (int i = 0; i < n; i++)
		if (write(pp[0][1], &c, 1) != 1 || read(pp[1][0], &c, 1) != 1)
			t_die("ping");
	c = 0;
	if (write(pp[0][1], &c, 1) != 1)
		t_die("ping");
	pthread_join(th, NULL);
	for (int i = 0; i < 2; i++) {
		close(pp[i][0]);
		close(pp[i][1]);
	}
}

/* Readers of one open slices file, at once: each keeps the lines it got. */
struct preader {
	int fd, id;
	char *out;
	size_t len, cap;
};

static void *preader(void *arg)
{
	struct preader *p = arg;
	char a[3000], b[3000];

	t_pin(p->id % 2);
	for (;;) {
		struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
		ssize_t n;

		/* Half of them preadv() into two buffers, half pread(); the offset is ignored. */
		if (p->id % 2)
			n = preadv(p->fd, iov, 2, 0);
		else
			n = pread(p->fd, a, sizeof(a), 0);
		if (n <= 0)
			break;
		if (p->len + (size_t)n + 1 > p->cap)
			break;
		/* Each buffer holds whole lines: a's are followed by b's only if a was full. */
		memcpy(p->out + p->len, a, (size_t)n < sizeof(a) ? (size_t)n : sizeof(a));
		if ((size_t)n > sizeof(a))
			memcpy(p->out + p->len + sizeof(a), b, (size_t)n - sizeof(a));
		p->len += (size_t)n;
	}
	p->out[p->len] = 0;
	return NULL;
}

/* Lines of the slices file that are not whole reports, or repeat one: 0 if none. */
static int check_lines(char *all, int *nlines, unsigned long long *first, unsigned long long *last)
{
	static unsigned char seen[1 << 16];
	int bad = 0;

	memset(seen, 0, sizeof(seen));
	*nlines = 0;
	*first = ~0ull;
	*last = 0;
	for (char *l = all, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
		unsigned long long seq;
		char event[16];
		int end = 0;

		*nl = 0;
		if (!strncmp(l, "lost ", 5))
			continue;
		if (sscanf(l, "seq=%llu event=%15s %*[^\n]%n", &seq, event, &end) != 2 ||
		    !strstr(l, " stack_via=") || !strstr(l, " stack=") || seq >= sizeof(seen) * 8) {
			if (bad++ < 3)
				printf("#   garbled: %.200s\n", l);
			continue;
		}
		if (seen[seq / 8] & (1 << seq % 8)) {
			if (bad++ < 3)
				printf("#   twice: seq %llu\n", seq);
		}
		seen[seq / 8] |= 1 << seq % 8;
		*first = seq < *first ? seq : *first;
		*last = seq > *last ? seq : *last;
		(*nlines)++;
	}
	return bad;
}

static void *churn(void *arg)
{
	struct csf_snap s;

	(void)arg;
	t_snap(&s);
	t_spin_ns(MS);
	return NULL;
}

SCENARIO(off_no_probe_no_timer, "the watch off: no probe runs, no timer is queued")
{
	long before, on, after;

	start_from(0, false);
	REQUIRE(file_write(TRACING "/kprobe_events",
			   "p:csf_hits coarse_stat_fs:csf_switch_probe") == 0,
		"kprobe event: %s", strerror(errno));
	REQUIRE(file_write(TRACING "/events/kprobes/csf_hits/enable", "1") == 0, "enable");
	before = probe_hits();
	ping_pong(500);
	CHECK(!timer_listed("csf_tick"), "a watch timer queued while off");
	CHECK_EQ(probe_hits(), before);
	set_warn(threshold / 1000);
	ping_pong(500);
	on = probe_hits();
	CHECK(on >= before + 1000, "%ld probe hits for 1000 switches with the watch on",
	      on - before);
	CHECK(timer_listed("csf_tick"), "no watch timer while on");
	set_warn(0);
	on = probe_hits();
	ping_pong(500);
	after = probe_hits();
	CHECK_EQ(after, on);
	CHECK(!timer_listed("csf_tick"), "a watch timer left queued after off");
	printf("#   probe hits: off %ld, on %ld, off again %ld\n", before, on - before, after - on);
	file_write(TRACING "/events/kprobes/csf_hits/enable", "0");
	file_write(TRACING "/kprobe_events", "-:csf_hits");
}

SCENARIO(fifo99_reported,
	 "SCHED_FIFO 99 spinning 400 ms: reported while it spins, class rt, then its length")
{
	struct spinner s = { .cpu = 1,
			     .policy = SCHED_FIFO,
			     .prio = 99,
			     .spin_ns = 400 * MS,
			     .name = "csf-fifo99" };
	struct spinner waiters[3];
	const struct report *run, *end;
	pthread_t wt[3];

	start_from(threshold / 1000, false);
	/* Three fair threads on the same CPU, runnable all along: they wait behind the spin. */
	for (int i = 0; i < 3; i++) {
		waiters[i] = (struct spinner){
			.cpu = 1, .policy = SCHED_OTHER, .spin_ns = 700 * MS, .name = "csf-waiter"
		};
		pthread_create(&wt[i], NULL, spin, &waiters[i]);
	}
	t_sleep_ns(100 * MS);
	collect_start();
	run_spinner(&s);
	collect_stop();
	for (int i = 0; i < 3; i++)
		pthread_join(wt[i], NULL);
	REQUIRE(!s.err, "SCHED_FIFO: %s", strerror(s.err));
	run = find(s.tid, "running");
	end = find(s.tid, "end");
	REQUIRE(run && end, "reports: running %p, end %p", (void *)run, (void *)end);
	print_report(run);
	print_report(end);
	CHECK(run->arrived < s.ended, "the report came %.1f ms after the spin ended",
	      (double)(run->arrived - s.ended) / 1e6);
	CHECK(run->arrived - s.began < threshold + 2 * period + 100 * MS,
	      "the report came %.1f ms after the spin began",
	      (double)(run->arrived - s.began) / 1e6);
	CHECK(!strcmp(run->class, "rt"), "class %s", run->class);
	CHECK(!strcmp(run->policy, "fifo") && run->rtprio == 99, "policy %s/%d", run->policy,
	      run->rtprio);
	CHECK(!strcmp(run->comm, "csf-fifo99") && run->cpu == 1, "comm %s cpu %d", run->comm,
	      run->cpu);
	CHECK(run->tgid == getpid(), "tgid %d", run->tgid);
	CHECK(t_waiting_ok(run->waiting, 3), "waiting %d with 3 fair threads queued behind",
	      run->waiting);
	/*
	 * The timer interrupts the spinner, in user space or in a softirq run on its way
	 * back from an interrupt (handle_softirqs...): a stack either way.
	 */
	CHECK(!strcmp(run->via, "irq") && run->stack[0] && strcmp(run->stack, "-") != 0,
	      "stack (%s) %s", run->via, run->stack);
	/*
	 * Execution time: of the task itself, so no more than the slice's wall length (give
	 * or take the scheduler clock's reading before the switch).
	 */
	CHECK(run->exec_ns >= 0 && (uint64_t)run->exec_ns <= run->len_ns + EXEC_SLACK,
	      "running: exec %lld ns of %llu", run->exec_ns, run->len_ns);
	CHECK(end->exec_ns > 0 && (uint64_t)end->exec_ns <= end->len_ns + EXEC_SLACK,
	      "end: exec %lld ns of %llu", end->exec_ns, end->len_ns);
	CHECK(end->len_ns > 0.9 * (double)(s.ended - s.began) &&
		      end->len_ns < 1.1 * (double)(s.ended - s.began),
	      "end: %.1f ms, spun %.1f ms", end->len_ns / 1e6, (double)(s.ended - s.began) / 1e6);
}

SCENARIO(deadline_class, "SCHED_DEADLINE (100 ms every 200 ms) spinning: class deadline")
{
	struct spinner s = {
		.cpu = -1, .policy = SCHED_DEADLINE, .spin_ns = 300 * MS, .name = "csf-deadline"
	};
	const struct report *run;

	start_from(threshold / 1000, false); /* unpinned: SCHED_DEADLINE needs every CPU */
	collect_start();
	run_spinner(&s);
	collect_stop();
	if (s.err == EBUSY || s.err == EPERM)
		SKIP("SCHED_DEADLINE refused: %s", strerror(s.err));
	REQUIRE(!s.err, "SCHED_DEADLINE: %s", strerror(s.err));
	run = find(s.tid, "running");
	REQUIRE(run, "no report for the deadline thread");
	print_report(run);
	CHECK(!strcmp(run->class, "deadline") && !strcmp(run->policy, "deadline"),
	      "class %s policy %s", run->class, run->policy);
}

SCENARIO(stopper_nmi_stack,
	 "a 300 ms stopper callback, interrupts off: class stop, seen while it runs, NMI stack "
	 "(arm64: none, said so)")
{
	const struct report *run = NULL, *end = NULL;
	uint64_t began, ended;
	int rc;

	start_from(threshold / 1000, false);
	t_pin(0);
	collect_start();
	began = mono_ns();
	rc = system("insmod /csf/csf_selftest.ko action=stopper stop_cpu=1 stop_ms=300");
	ended = mono_ns();
	collect_stop();
	system("rmmod csf_selftest");
	REQUIRE(rc == 0, "insmod csf_selftest action=stopper: status %d", rc);
	for (int i = 0; i < atomic_load(&nreports) && !run; i++)
		if (!strcmp(reports[i].class, "stop") && !strcmp(reports[i].event, "running"))
			run = &reports[i];
	printf("#   insmod took %.1f ms, %d reports meanwhile\n", (double)(ended - began) / 1e6,
	       atomic_load(&nreports));
	if (!run)
		for (int i = 0; i < atomic_load(&nreports); i++)
			print_report(&reports[i]);
	REQUIRE(run, "no running report of class stop");
	for (int i = 0; i < atomic_load(&nreports) && !end; i++)
		if (!strcmp(reports[i].event, "end") && reports[i].cpu == run->cpu &&
		    reports[i].start_ns == run->start_ns)
			end = &reports[i];
	print_report(run);
	REQUIRE(end, "no end report of the stopper's slice");
	print_report(end);
	CHECK(run->cpu == 1, "cpu %d", run->cpu);
	/*
	 * Seen while it ran: the running report was read before its slice's end report
	 * existed (a read returns all the ring holds), so in an earlier read. insmod can
	 * return long after the callback: its return proves nothing.
	 */
	CHECK(run->batch < end->batch && run->seq < end->seq,
	      "the running report (read %d) came with or after the end (read %d)", run->batch,
	      end->batch);
	CHECK(run->len_ns < end->len_ns, "made at %.1f ms of a %.1f ms slice", run->len_ns / 1e6,
	      end->len_ns / 1e6);
	printf("#   reported %.1f ms after insmod began, callback of 300 ms\n",
	       (double)(run->arrived - began) / 1e6);
	/* The stopper's policy is SCHED_FIFO 99: a policy check would call it rt. */
	CHECK(!strcmp(run->policy, "fifo") && run->rtprio == 99, "policy %s/%d", run->policy,
	      run->rtprio);
#ifdef __aarch64__
	/* No NMI the watch can send (docs/arm64.md): the neighbour's report says so, no stack. */
	CHECK(run->exec_ns == -1, "exec %lld ns, without an NMI", run->exec_ns);
	CHECK(!strcmp(run->via, "no-nmi"), "stack taken by %s", run->via);
	CHECK(!strcmp(run->stack, "-"), "stack %s", run->stack);
#else
	CHECK(run->exec_ns >= 0 && (uint64_t)run->exec_ns <= run->len_ns + EXEC_SLACK,
	      "exec %lld ns, through the NMI", run->exec_ns);
	CHECK(!strcmp(run->via, "nmi"), "stack taken by %s", run->via);
	CHECK(strstr(run->stack, "csf_selftest_stopper"), "stack %s", run->stack);
#endif
}

SCENARIO(no_false_reports,
	 "no false reports: two fair spinners share a CPU for 2 s; an idle second")
{
	pthread_barrier_t go;
	struct spinner s[2] = { { .cpu = 1,
				  .policy = SCHED_OTHER,
				  .spin_ns = 2000 * MS,
				  .name = "csf-fair",
				  .go = &go,
				  .charge = true },
				{ .cpu = 1,
				  .policy = SCHED_OTHER,
				  .spin_ns = 2000 * MS,
				  .name = "csf-fair",
				  .go = &go,
				  .charge = true } };
	pthread_t th[2];
	int n;

	start_from(threshold / 1000, true);
	pthread_barrier_init(&go, NULL, 2);
	collect_start();
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, spin, &s[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&go);
	/*
	 * An emulated guest's vCPU can be kept from running by the host (another vCPU, other
	 * load) while its task holds it: the guest cannot preempt then, and its wall length
	 * proves nothing. The fair scheduler shares out execution time: a slice's execution
	 * time, less what the kernel charged the spinner while its loop did not run (stalls,
	 * interrupts), stays under the threshold.
	 */
	printf("#   charged to the spinners while they did not run: %.1f and %.1f ms\n",
	       s[0].charged / 1e6, s[1].charged / 1e6);
	for (int i = 0; i < atomic_load(&nreports); i++) {
		for (int k = 0; k < 2; k++) {
			if (reports[i].tid != s[k].tid)
				continue;
			print_report(&reports[i]);
			CHECK(reports[i].len_ns >= threshold, "reported under the threshold");
			CHECK(reports[i].exec_ns >= 0 && (uint64_t)reports[i].exec_ns <=
								 reports[i].len_ns + EXEC_SLACK,
			      "exec %lld ns of %llu", reports[i].exec_ns, reports[i].len_ns);
			CHECK((uint64_t)reports[i].exec_ns < threshold + s[k].charged,
			      "a fair spinner executed %.1f ms in one slice, beyond what "
			      "stalls explain",
			      reports[i].exec_ns / 1e6);
		}
	}
	collect_stop();

	collect_start();
	t_sleep_ns(1000 * MS);
	collect_stop();
	n = atomic_load(&nreports);
	for (int i = 0; i < n; i++)
		print_report(&reports[i]);
	CHECK_EQ(n, 0);
}

SCENARIO(thread_page_longest,
	 "the thread page: the longest stretch, the histograms, stretches over the threshold")
{
	struct csf_thread_hist h0, h1, h2;
	struct csf_snap b;
	uint64_t runq0 = 0, runq1 = 0, on = 0, max_us;
	int bucket, hist;

	struct sched_param fifo = { .sched_priority = 10 }, other = { 0 };

	start_from(threshold / 1000, true);
	t_pin(1);
	/*
	 * SCHED_FIFO: timers' threads (PREEMPT_RT) and fair tasks cannot split the spin. Nothing
	 * fails between here and SCHED_OTHER again, which the scenarios after this one need.
	 */
	REQUIRE(pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo) == 0, "FIFO");
	/*
	 * The stopper can (the soft-lockup watchdog queues work on it every 4 s): a spin the
	 * kernel counts an involuntary switch in is split, and is spun again, 3 times at most.
	 */
	for (int try = 0; try < 3; try++) {
		struct rusage r0, r1;

		hist = csf_thread_hist(&h0);
		getrusage(RUSAGE_THREAD, &r0);
		t_spin_ns(200 * MS); /* over the 50 ms threshold */
		getrusage(RUSAGE_THREAD, &r1);
		if (hist || r1.ru_nivcsw == r0.ru_nivcsw)
			break;
		printf("#   the spin was preempted %ld time(s): again\n",
		       r1.ru_nivcsw - r0.ru_nivcsw);
	}
	if (hist) {
		pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
		REQUIRE(0, "csf_thread_hist: %s", strerror(errno));
	}
	for (int i = 0; i < 5; i++)
		t_sleep_ns(10 * MS);
	t_snap(&b);
	hist = csf_thread_hist(&h1);
	pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
	REQUIRE(hist == 0, "csf_thread_hist");
	max_us = (uint64_t)(t_ms(&b, b.p.max_oncpu_cyc) * 1000);
	printf("#   max_oncpu %.1f ms, nr_long %llu (threshold %u us)\n", max_us / 1e3,
	       (unsigned long long)h1.nr_long_oncpu, h1.long_threshold_us);
	CHECK(max_us >= 180000, "max_oncpu %.1f ms after a 200 ms spin", max_us / 1e3);
	CHECK(b.p.max_oncpu_cyc <= b.p.oncpu_cyc, "longer than all on-CPU time");
	CHECK(h1.nr_long_oncpu == h0.nr_long_oncpu + 1, "nr_long %llu -> %llu",
	      (unsigned long long)h0.nr_long_oncpu, (unsigned long long)h1.nr_long_oncpu);
	CHECK_EQ(h1.long_threshold_us, threshold / 1000);
	/* The longest stretch is in its log2 bucket. */
	bucket = 63 - __builtin_clzll(max_us);
	CHECK(h1.oncpu_us[bucket] >= h0.oncpu_us[bucket] + 1, "bucket %d: %llu -> %llu", bucket,
	      (unsigned long long)h0.oncpu_us[bucket], (unsigned long long)h1.oncpu_us[bucket]);
	for (int i = 0; i < CSF_HIST_BUCKETS; i++) {
		runq0 += h0.runq_us[i];
		runq1 += h1.runq_us[i];
		on += h1.oncpu_us[i] - h0.oncpu_us[i];
	}
	CHECK(runq1 >= runq0 + 5, "runq samples %llu -> %llu after 5 sleeps",
	      (unsigned long long)runq0, (unsigned long long)runq1);
	CHECK(on >= 5, "%llu on-CPU stretches after a spin and 5 sleeps", (unsigned long long)on);
	/* With the watch off, long stretches are not counted. */
	set_warn(0);
	t_spin_ns(100 * MS);
	t_sleep_ns(MS);
	REQUIRE(csf_thread_hist(&h2) == 0, "csf_thread_hist");
	CHECK_EQ(h2.nr_long_oncpu, h1.nr_long_oncpu);
	set_warn(threshold / 1000);
	t_pin(0);
}

SCENARIO(ring_lost_line,
	 "the ring: a reader that falls behind gets a counted lost line, then the newest")
{
	struct spinner s = { .cpu = 1, .policy = SCHED_FIFO, .prio = 10, .name = "csf-many" };
	unsigned long long last = ~0ull, lost = 0, first_after = 0, next;
	static char buf[1 << 20];
	int fd = open(SLICES, O_RDONLY | O_NONBLOCK), lines = 0, lost_lines = 0;
	bool counted = true;
	ssize_t n;

	start_from(threshold / 1000, true);
	REQUIRE(fd >= 0, "open");
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) { /* drain: note the last seq */
		buf[n] = 0;
		for (char *l = buf, *nl; (nl = strchr(l, '\n')); l = nl + 1)
			sscanf(l, "seq=%llu", &last);
	}
	set_warn(1000); /* 1 ms */
	for (int i = 0; i < 150; i++) { /* 150 slices of 3 ms: 300 reports or more */
		s.spin_ns = 3 * MS;
		run_spinner(&s);
	}
	set_warn(threshold / 1000);
	n = read(fd, buf, sizeof(buf) - 1);
	REQUIRE(n > 0, "read: %s", strerror(errno));
	buf[n] = 0;
	/*
	 * Every report is either read or counted in a lost line: each seq is the one before plus
	 * one plus what the lost lines between them said. The ring can lap the reader again while
	 * it reads (a slow kernel), so a second lost line may follow the first.
	 */
	next = last == ~0ull ? 0 : last + 1;
	for (char *l = buf, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
		unsigned long long seq, k;

		*nl = 0;
		if (sscanf(l, "lost %llu", &k) == 1) {
			CHECK(k > 0, "a line that lost nothing: %s", l);
			lost += k;
			next += k;
			lost_lines++;
			continue;
		}
		if (sscanf(l, "seq=%llu", &seq) != 1)
			continue;
		if (!lines)
			first_after = seq;
		if (seq != next) {
			if (counted)
				printf("#   seq %llu where %llu was due\n", seq, next);
			counted = false;
		}
		next = seq + 1;
		lines++;
	}
	while (read(fd, buf, sizeof(buf) - 1) > 0)
		;
	close(fd);
	printf("#   lost %llu in %d line(s), then %d reports from seq %llu\n", lost, lost_lines,
	       lines, first_after);
	CHECK(lost > 0, "no lost line after more reports than the ring holds");
	CHECK(counted, "a report neither read nor counted as lost");
	/* The ring's 256 reports, and any that came while reading. */
	CHECK(lines >= 256, "%d lines", lines);
}

SCENARIO(root_only, "slices and slice_warn_us are root's")
{
	pid_t pid;
	int st;

	start_from(threshold / 1000, true);
	pid = fork();
	if (pid == 0) {
		int bad = setgid(NOBODY) || setuid(NOBODY);

		bad |= (open(SLICES, O_RDONLY) != -1 || errno != EACCES) << 1;
		bad |= (file_write(WARN, "0") == 0) << 2;
		_exit(bad);
	}
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
}

SCENARIO(csfcat_json_sigint,
	 "csfcat slices --threshold --json: follows, and restores the threshold on SIGINT")
{
	/* A name with characters the kernel escapes in its key=value lines. */
	struct spinner s = {
		.cpu = 1, .policy = SCHED_FIFO, .prio = 20, .spin_ns = 200 * MS, .name = "csf cat=1"
	};
	static char out[1 << 20];
	char line[64], want[32];
	int fd, st;
	pid_t pid;
	ssize_t got;
	FILE *f;

	start_from(threshold / 1000, true);
	set_warn(0);
	/* A file, not a pipe: csfcat first prints what the ring holds, maybe more than fits. */
	fd = open("/tmp/csfcat-slices.out", O_RDWR | O_CREAT | O_TRUNC, 0600);
	REQUIRE(fd >= 0, "open /tmp/csfcat-slices.out");
	pid = fork();
	if (pid == 0) {
		dup2(fd, 1);
		execlp("csfcat", "csfcat", "slices", "--threshold", "50", "--json", NULL);
		_exit(99);
	}
	/* csfcat has set the threshold once the watch is on. */
	for (int i = 0; i < 300 && !timer_listed("csf_tick"); i++)
		t_sleep_ns(10 * MS);
	run_spinner(&s);
	snprintf(want, sizeof(want), "\"tid\":%d,", s.tid);
	/* It may still be printing the history: wait for the spinner's report. */
	for (int i = 0; i < 500; i++) {
		got = pread(fd, out, sizeof(out) - 1, 0);
		out[got > 0 ? got : 0] = 0;
		if (strstr(out, want))
			break;
		t_sleep_ns(10 * MS);
	}
	kill(pid, SIGINT);
	waitpid(pid, &st, 0);
	got = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	out[got > 0 ? got : 0] = 0;
	printf("#   %.600s\n", strstr(out, want) ? strstr(out, want) : out);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "csfcat status %#x", st);
	CHECK(json_valid_lines(out), "not JSON lines");
	CHECK(strstr(out, "\"comm\":\"csf cat=1\""), "comm not unescaped");
	CHECK(strstr(out, want), "no report of tid %d", s.tid);
	CHECK(strstr(out, "\"exec_ns\":") && !strstr(out, "\"exec_ns\":\""), "no numeric exec_ns");
	f = fopen(WARN, "r");
	REQUIRE(f && fgets(line, sizeof(line), f), "read slice_warn_us");
	fclose(f);
	CHECK(!strcmp(line, "0\n"), "slice_warn_us %s after csfcat, was 0", line);
}

/* The value of the Prometheus sample line that begins with series (name{labels}); -1: none. */
static double prom_sample(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *l = text; *l; l += strcspn(l, "\n") + !!l[strcspn(l, "\n")]) {
		if (!strncmp(l, series, n) && l[n] == ' ')
			return strtod(l + n + 1, NULL);
	}
	return -1;
}

#define PROM_FILE "/tmp/csfcat-slices.prom"
#define RT_COUNT "csfcat_long_slices_total{class=\"rt\"}"
#define RT_UNDER_50MS "csfcat_long_slice_duration_seconds_bucket{class=\"rt\",le=\"0.05\"}"
#define RT_ALL "csfcat_long_slice_duration_seconds_bucket{class=\"rt\",le=\"+Inf\"}"
#define RT_SUM "csfcat_long_slice_duration_seconds_sum{class=\"rt\"}"

/* PROM_FILE once it has stayed the same file (rename() makes a new inode) for 300 ms. */
static char *prom_settled(char *buf, size_t len)
{
	struct stat a, b;

	for (int i = 0; i < 100; i++) {
		if (!stat(PROM_FILE, &a)) {
			t_sleep_ns(300 * MS);
			if (!stat(PROM_FILE, &b) && a.st_ino == b.st_ino)
				break;
		} else {
			t_sleep_ns(50 * MS);
		}
	}
	buf[0] = 0;
	file_read(PROM_FILE, buf, len);
	return buf;
}

SCENARIO(csfcat_prometheus,
	 "csfcat slices --prometheus: a 100 ms SCHED_FIFO spin counted once, class rt, over 50 ms")
{
	struct spinner s = {
		.cpu = 1, .policy = SCHED_FIFO, .prio = 20, .spin_ns = 100 * MS, .name = "csf-prom"
	};
	static char before[65536], after[65536];
	int st;
	pid_t pid;

	start_from(threshold / 1000, true);
	set_warn(0);
	unlink(PROM_FILE);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execlp("csfcat", "csfcat", "slices", "--threshold", "50", "--prometheus", PROM_FILE,
		       NULL);
		_exit(99);
	}
	for (int i = 0; i < 300 && !timer_listed("csf_tick"); i++)
		t_sleep_ns(10 * MS);
	/* csfcat counts what the ring still holds from earlier scenarios first: count from there. */
	prom_settled(before, sizeof(before));
	printf("#   before: rt %.0f\n", prom_sample(before, RT_COUNT));
	CHECK(prom_sample(before, "csfcat_slice_threshold_seconds") == 0.05, "threshold: %.6f",
	      prom_sample(before, "csfcat_slice_threshold_seconds"));
	run_spinner(&s);
	for (int i = 0; i < 500; i++) {
		file_read(PROM_FILE, after, sizeof(after));
		if (prom_sample(after, RT_COUNT) != prom_sample(before, RT_COUNT))
			break;
		t_sleep_ns(10 * MS);
	}
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	REQUIRE(!s.err, "SCHED_FIFO: %s", strerror(s.err));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "csfcat status %#x", st);
	/* Written once more as csfcat ends, the threshold put back (0). */
	after[0] = 0;
	file_read(PROM_FILE, after, sizeof(after));
	CHECK_EQ(prom_sample(after, RT_COUNT) - prom_sample(before, RT_COUNT), 1);
	CHECK_EQ(prom_sample(after, RT_ALL) - prom_sample(before, RT_ALL), 1);
	CHECK_EQ(prom_sample(after, RT_UNDER_50MS) - prom_sample(before, RT_UNDER_50MS), 0);
	CHECK(prom_sample(after, RT_SUM) - prom_sample(before, RT_SUM) >= 0.1,
	      "sum grew by %.3f s for a 100 ms spin",
	      prom_sample(after, RT_SUM) - prom_sample(before, RT_SUM));
	CHECK(prom_sample(after, "csfcat_slice_threshold_seconds") == 0, "threshold after: %.6f",
	      prom_sample(after, "csfcat_slice_threshold_seconds"));
	unlink(PROM_FILE);
}

SCENARIO(pread_preadv_8_threads,
	 "pread() and preadv() of one open file from 8 threads: every line whole, none twice")
{
	struct spinner s = { .cpu = 1, .policy = SCHED_FIFO, .prio = 10, .name = "csf-pread" };
	static char all[8 << 20];
	struct preader p[8];
	pthread_t th[8];
	int bad = 0, total = 0, rounds = 0;
	uint64_t until;

	start_from(0, true); /* as csfcat restored it */
	set_warn(1000); /* 1 ms */
	for (int i = 0; i < 150; i++) { /* fill the ring: 256 reports */
		s.spin_ns = 3 * MS;
		run_spinner(&s);
	}
	set_warn(threshold / 1000);
	/*
	 * For 3 s at least: a single-threaded emulator switches vCPUs every few ms only, and
	 * a race needs a switch inside a read.
	 */
	until = mono_ns() + 3000 * MS;
	for (; rounds < 20 || mono_ns() < until; rounds++) {
		int fd = open(SLICES, O_RDONLY | O_NONBLOCK), n;
		unsigned long long first, last;
		size_t len = 0;

		REQUIRE(fd >= 0, "open");
		for (int i = 0; i < 8; i++) {
			p[i] = (struct preader){ .fd = fd, .id = i, .cap = 1 << 20 };
			p[i].out = malloc(p[i].cap);
			pthread_create(&th[i], NULL, preader, &p[i]);
		}
		for (int i = 0; i < 8; i++) {
			pthread_join(th[i], NULL);
			memcpy(all + len, p[i].out, p[i].len);
			len += p[i].len;
			free(p[i].out);
		}
		all[len] = 0;
		close(fd);
		bad += check_lines(all, &n, &first, &last);
		total += n;
		/* Every report the ring held, once: contiguous from first to last. */
		if (n && last - first + 1 != (unsigned long long)n && bad++ < 3)
			printf("#   %d lines for seq %llu..%llu\n", n, first, last);
	}
	printf("#   %d lines in %d rounds\n", total, rounds);
	CHECK(total >= rounds * 256, "%d lines", total);
	CHECK_EQ(bad, 0);
}

SCENARIO(slice_printk,
	 "slice_printk: off by default; on, a rate-limited line per report in the kernel log")
{
	struct spinner s = { .cpu = 1, .policy = SCHED_FIFO, .prio = 20, .spin_ns = 120 * MS };
	static char log[1 << 20];
	char want[64], line[16] = "";
	int n;
	FILE *f = fopen(PRINTK, "r");

	start_from(threshold / 1000, true);
	REQUIRE(f && fgets(line, sizeof(line), f), "read " PRINTK);
	fclose(f);
	CHECK(!strcmp(line, "N\n"), "slice_printk %s by default", line);
	s.name = "csf-quiet";
	run_spinner(&s);
	REQUIRE(file_write(PRINTK, "1") == 0, "slice_printk=1");
	s.name = "csf-logged";
	run_spinner(&s);
	t_sleep_ns(100 * MS);
	file_write(PRINTK, "0");
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1);
	REQUIRE(n > 0, "klogctl: %s", strerror(errno));
	log[n] = 0;
	snprintf(want, sizeof(want), "long slice: cpu 1 tid %d (csf-logged) class rt", s.tid);
	printf("#   %.200s\n", strstr(log, want) ? strstr(log, want) : "(none)");
	CHECK(strstr(log, want), "no kernel log line for tid %d", s.tid);
	CHECK(!strstr(log, "(csf-quiet)"), "a line while slice_printk was off");
}

SCENARIO(trace_event_symbols,
	 "trace events: stacks as symbols in the text form, no kernel or user address")
{
	struct spinner s = { .cpu = 1,
			     .policy = SCHED_FIFO,
			     .prio = 20,
			     .spin_ns = 120 * MS,
			     .name = "csf-traced" };
	static char trace[1 << 20];
	const char *ev = TRACING "/events/coarse_stat_fs";
	char path[128], *line, *save, *st;
	int user = 0, kernel = 0, rc;
	bool bad;
	size_t n;
	FILE *f;

	start_from(threshold / 1000, true);
	file_write(TRACING "/trace", "");
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/enable", ev, i ? "csf_slice_end" : "csf_slice");
		REQUIRE(file_write(path, "1") == 0, "enable %s", path);
	}
	run_spinner(&s);
	/*
	 * A kernel stack: the stopper's, through the NMI; where there is none (arm64), a kernel
	 * spin with interrupts on, which the watch's timer interrupts.
	 */
#ifdef __aarch64__
	rc = system("taskset -c 1 insmod /csf/csf_selftest.ko action=kspin stop_ms=150");
#else
	rc = system("insmod /csf/csf_selftest.ko action=stopper stop_cpu=1 stop_ms=150");
#endif
	t_sleep_ns(100 * MS);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/enable", ev, i ? "csf_slice_end" : "csf_slice");
		file_write(path, "0");
	}
	/* Read while csf_selftest is loaded: its frames are symbolized as the text is made. */
	f = fopen(TRACING "/trace", "r");
	n = f ? fread(trace, 1, sizeof(trace) - 1, f) : 0;
	if (f)
		fclose(f);
	system("rmmod csf_selftest");
	REQUIRE(rc == 0, "insmod csf_selftest action=stopper: status %d", rc);
	REQUIRE(n > 0, "read trace: %s", strerror(errno));
	trace[n] = 0;
	for (line = strtok_r(trace, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(line, " csf_slice") || !(st = strstr(line, " stack=")))
			continue;
		if (strstr(line, "comm=csf-traced ") && !strncmp(st, " stack=user", 11))
			user++;
		if ((strstr(line, "comm=migration/1 ") && strstr(st, "csf_selftest_stopper")) ||
		    (strstr(line, "comm=insmod ") && strstr(st, "csf_selftest_")))
			kernel++;
		/* A frame is a symbol (func+0x1/0x2), "user" or "?", never an address. */
		bad = strstr(st, "user:") != NULL;
		for (const char *x = st; (x = strstr(x, "0x")); x += 2)
			bad |= x[-1] != '+' && x[-1] != '/';
		CHECK(!bad, "an address in the text form: %.300s", line);
	}
	printf("#   %d events of the user spinner, %d of the stopper with its symbol\n", user,
	       kernel);
	CHECK(user >= 1, "no event of the user spinner with a user stack");
	CHECK(kernel >= 1, "no event of the stopper with csf_selftest_stopper (arm64: of insmod "
			   "with a frame of csf_selftest)");
}

SCENARIO(hotplug_readers_woken,
	 "CPU 1 going offline and back 8 times: readers still woken, the watch still switches off")
{
	struct pollfd pfd;
	struct sched_param fifo = { .sched_priority = 10 }, other = { .sched_priority = 0 };
	int ends = 0, stuck = 0, undrained = 0;
	bool offline_ok = true, ftrace;
	uint64_t drain_end;
	char tracing_on[8] = "1";

	start_from(threshold / 1000, true);
	/*
	 * A slice that ends on a CPU going offline (its stopper's) is reported there after
	 * its irq_work was flushed: its readers' wakeup must still come, from elsewhere.
	 */
	set_warn(1000); /* 1 ms: the stopper's slices are reported */
	t_pin(0);
	file_read_value(TRACING "/tracing_on", tracing_on, sizeof(tracing_on));
	file_write(TRACING "/tracing_on", "0");
#ifdef __aarch64__
	/*
	 * Not on arm64: emulated, its stop_machine() is slow enough without it, and with it 6.12
	 * once warned of an underflow of the deadline class's running_bw (inactive_task_timer())
	 * while CPU 1 went offline, a kernel bug of its own (docs/arm64.md).
	 */
	ftrace = false;
#else
	ftrace = file_write(TRACING "/current_tracer", "function") == 0;
#endif
	collect_start();
	for (int i = 0; i < 8 && offline_ok && !stuck; i++) {
		char buf[65536];
		int fd = open(SLICES, O_RDONLY | O_NONBLOCK);

		/* Everything traced: the emulated CPUs' stop_machine() takes longer. */
		if (ftrace)
			file_write(TRACING "/tracing_on", "1");
		if (file_write(CPU1_ONLINE, "0")) {
			if (ftrace)
				file_write(TRACING "/tracing_on", "0");
			offline_ok = false;
			close(fd);
			break;
		}
		if (ftrace)
			file_write(TRACING "/tracing_on", "0");
		/*
		 * Drained, so that the poll below waits for a new report. SCHED_FIFO: this thread
		 * and the collector share CPU 0 and, at a 1 ms threshold, each wakeup of the one
		 * would end a slice of the other, a report that wakes the one again; where reading
		 * is slow (emulated arm64) the reports would never run dry. Bounded all the same: a
		 * round that does not drain checks only that reports still come, and is counted.
		 */
		pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);
		drain_end = mono_ns() + 2000 * MS;
		while (read(fd, buf, sizeof(buf)) > 0)
			if (mono_ns() > drain_end) {
				undrained++;
				break;
			}
		pthread_setschedparam(pthread_self(), SCHED_OTHER, &other);
		/* A report of CPU 0's, now the only one: a 20 ms spin here. */
		t_spin_ns(20 * MS);
		pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 3000) != 1) {
			printf("#   round %d: a reader was not woken within 3 s\n", i);
			stuck++;
		}
		close(fd);
		file_write(CPU1_ONLINE, "1");
		t_sleep_ns(20 * MS);
	}
	collect_stop();
	if (ftrace)
		file_write(TRACING "/current_tracer", "nop");
	/* As found, with or without the function tracer: later tests read the trace. */
	file_write(TRACING "/tracing_on", tracing_on);
	for (int i = 0; i < atomic_load(&nreports); i++)
		ends += reports[i].cpu == 1 && !strcmp(reports[i].event, "end") &&
			!strcmp(reports[i].class, "stop");
	printf("#   %d stopper slices of CPU 1 ended over 1 ms (function tracer %s); %d of 8 "
	       "rounds never read the file dry\n",
	       ends, ftrace ? "on" : "unavailable", undrained);
	file_write(CPU1_ONLINE, "1");
	REQUIRE(offline_ok, "cannot take CPU 1 offline: %s", strerror(errno));
	CHECK_EQ(stuck, 0);
	CHECK(undrained < 8, "no round read the file dry: no wakeup was checked");
	set_warn(threshold / 1000);
}

SCENARIO(nmi_panic_on_off,
	 "unknown_nmi_panic=1: the watch switched on and off 60 times over irq-off slices")
{
	pid_t pid;
	int st, rc, nmi = 0;

	start_from(threshold / 1000, true);
	/*
	 * An NMI in flight when the watch's handler goes would be unknown: a panic here. arm64 has
	 * neither the watch's NMI nor the setting: there the switching alone is checked.
	 */
#ifndef __aarch64__
	REQUIRE(file_write("/proc/sys/kernel/unknown_nmi_panic", "1") == 0, "unknown_nmi_panic: %s",
		strerror(errno));
#endif
	set_warn(0);
	collect_start();
	for (int round = 0; round < 2; round++) {
		/* 4 ms stopper callbacks, interrupts off, one after the other on CPU 1. */
		pid = fork();
		if (pid == 0) {
			t_pin(0);
			_exit(system("insmod /csf/csf_selftest.ko action=stopper stop_cpu=1 "
				     "stop_ms=4 stop_n=150"));
		}
		t_pin(0);
		t_sleep_ns(30 * MS);
		for (int i = 0; i < 30; i++) {
			set_warn(1000);
			t_sleep_ns((uint64_t)(i % 5 + 2) * MS); /* the neighbour's NMI */
			set_warn(0);
		}
		waitpid(pid, &st, 0);
		rc = system("rmmod csf_selftest");
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 && rc == 0, "insmod %#x, rmmod %d", st,
		      rc);
	}
	collect_stop();
#ifndef __aarch64__
	file_write("/proc/sys/kernel/unknown_nmi_panic", "0");
#endif
	for (int i = 0; i < atomic_load(&nreports); i++)
		nmi += !strcmp(reports[i].via, "nmi") || !strcmp(reports[i].via, "lost");
	printf("#   %d reports through an NMI or lost\n", nmi);
	set_warn(threshold / 1000);
}

SCENARIO(switch_while_churning,
	 "switching the watch on and off in a loop while threads come and go")
{
	pthread_t th[8];

	start_from(threshold / 1000, true);
	for (int i = 0; i < 30; i++) {
		set_warn(i % 2 ? 1000 : 5000);
		for (int j = 0; j < 8; j++)
			pthread_create(&th[j], NULL, churn, NULL);
		set_warn(0);
		for (int j = 0; j < 8; j++)
			pthread_join(th[j], NULL);
	}
	CHECK(!timer_listed("csf_tick"), "a watch timer left queued");
}

int main(void)
{
	int rc;

	if (geteuid() != 0) {
		printf("# t_slice needs root\n");
		return 4;
	}
	/*
	 * The soft-lockup watchdog runs a stopper on every CPU every few seconds, which preempts
	 * even SCHED_FIFO 99 and would split the slices measured here: off for the test.
	 */
	file_write("/proc/sys/kernel/soft_watchdog", "0");
	mount("nodev", TRACING, "tracefs", 0, NULL); /* if the guest has not */
	rc = t_main("t_slice");
	set_warn(0);
	file_write("/proc/sys/kernel/soft_watchdog", "1");
	return rc;
}
