// SPDX-License-Identifier: GPL-2.0
/*
 * t_thread: each kind of wait lands in its bucket, and the buckets add up.
 *
 * Bounds are loose on purpose: the guest is emulated and its vCPUs share host CPUs, and time
 * stolen from a vCPU counts as whatever the thread was doing. What must hold exactly (the sum
 * rule) is checked exactly.
 */
#include "../t.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MS 1000000ull

static void check_sum(const struct csf_snap *a, const struct csf_snap *b)
{
	uint64_t sum = 0;

	for (int i = 0; i < CSF_NR_STATES; i++)
		sum += b->p.cyc[i] - a->p.cyc[i];
	CHECK(sum == b->tsc - a->tsc, "buckets add up to %llu cycles, wall is %llu",
	      (unsigned long long)sum, (unsigned long long)(b->tsc - a->tsc));
}

struct spinner {
	pthread_barrier_t *go;
	uint64_t ns;
	struct csf_snap a, b;
};

/* A real-time thread on CPU 1: sleeps 10 ms, then holds the CPU for 40 ms. */
static void *rt_hog(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };

	(void)arg;
	t_pin(1);
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		t_die("SCHED_FIFO");
	t_sleep_ns(10 * MS);
	t_spin_ns(40 * MS);
	return NULL;
}

/*
 * On CPU 0: wakes the thread reading the pipe after 20 ms. A wakeup from another CPU, as a timer
 * on CPU 1 would wait for the hog on PREEMPT_RT, where timers run in a real-time thread.
 */
struct waker {
	int fd;
	uint64_t woke; /* CLOCK_MONOTONIC when it wrote */
};

static void *waker(void *arg)
{
	struct waker *w = arg;
	char c = 0;

	t_pin(0);
	t_sleep_ns(20 * MS);
	w->woke = mono_ns();
	if (write(w->fd, &c, 1) != 1)
		t_die("waker");
	return NULL;
}

static void *spin_pinned(void *arg)
{
	struct spinner *s = arg;

	t_pin(1);
	pthread_barrier_wait(s->go);
	t_snap(&s->a);
	t_spin_ns(s->ns);
	t_snap(&s->b);
	return NULL;
}

/*
 * The runqueue wait histogram (struct csf_thread_hist.runq_us): a thread woken while a
 * real-time hog holds its CPU waits at least hold_ns there, by construction.
 */
struct runq_hold {
	int phase; /* 0: the waker is on CPU 0; 1: the hog holds CPU 1; 2: the sleeper is woken */
	int waker_on_cpu0;
	int fd;
	uint64_t hold_ns;
};

/* SCHED_FIFO on CPU 1: holds it until the sleeper has been woken, and hold_ns after that. */
static void *runq_hog(void *arg)
{
	struct runq_hold *h = arg;
	struct sched_param sp = { .sched_priority = 1 };

	t_pin(1);
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		t_die("SCHED_FIFO");
	__atomic_store_n(&h->phase, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&h->phase, __ATOMIC_SEQ_CST) < 2)
		;
	t_spin_ns(h->hold_ns);
	return NULL;
}

/* On CPU 0: once the hog holds CPU 1, wakes the thread reading the pipe. */
static void *runq_waker(void *arg)
{
	struct runq_hold *h = arg;
	char c = 0;

	t_pin(0);
	__atomic_store_n(&h->waker_on_cpu0, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&h->phase, __ATOMIC_SEQ_CST) < 1)
		t_sleep_ns(MS);
	if (write(h->fd, &c, 1) != 1)
		t_die("runq_waker");
	__atomic_store_n(&h->phase, 2, __ATOMIC_SEQ_CST);
	return NULL;
}

/* A snapshot and the histograms as of the same switch (no switch between the two reads). */
static void snap_hist(struct csf_snap *s, struct csf_thread_hist *h)
{
	struct csf_thread_hist again;

	for (int i = 0; i < 100; i++) {
		if (csf_thread_hist(h))
			t_die("csf_thread_hist");
		t_snap(s);
		if (csf_thread_hist(&again))
			t_die("csf_thread_hist");
		if (!memcmp(h, &again, sizeof(again)))
			return;
	}
	t_die("no two reads of the histograms without a switch between them");
}

/* Bucket k of the log2 histograms holds [lo, hi) us: [0] is [0, 2), [k] is [2^k, 2^(k+1)). */
static double bucket_lo_us(int k)
{
	return k ? (double)(1ull << k) : 0;
}

static double bucket_hi_us(int k)
{
	return k == CSF_HIST_BUCKETS - 1 ? INFINITY : (double)(2ull << k);
}

/*
 * The CPUs the program was started on. The scenarios that pin the main thread leave it pinned;
 * the others start from here, so that none runs where an earlier scenario left it.
 */
static cpu_set_t start_cpus;

static void run_anywhere(void)
{
	if (sched_setaffinity(0, sizeof(start_cpus), &start_cpus))
		t_die("sched_setaffinity");
}

SCENARIO(sleep_in_sleep, "a sleep lands in sleep_cyc")
{
	struct csf_snap a, b;
	struct t_diff d;

	run_anywhere();
	t_snap(&a);
	t_sleep_ns(50 * MS);
	t_snap(&b);
	d = t_diff(&a, &b);
	t_print_diff("sleep 50 ms", &a, &b);
	CHECK_TIMING(d.sleep >= 45, "sleep %.3f ms, expected about 50", d.sleep);
	CHECK_TIMING(d.sleep >= 0.8 * d.wall, "sleep %.3f of wall %.3f ms", d.sleep, d.wall);
	CHECK(b.p.nr_block > a.p.nr_block, "no voluntary switch counted");
	check_sum(&a, &b);
}

SCENARIO(spin_in_oncpu, "a spin lands in oncpu_cyc")
{
	struct csf_snap a, b;
	struct t_diff d;

	run_anywhere();
	t_snap(&a);
	t_spin_ns(50 * MS);
	t_snap(&b);
	d = t_diff(&a, &b);
	t_print_diff("spin 50 ms", &a, &b);
	CHECK_TIMING(d.cpu >= 45, "oncpu %.3f ms, expected about 50", d.cpu);
	CHECK_TIMING(d.cpu >= 0.8 * d.wall, "oncpu %.3f of wall %.3f ms", d.cpu, d.wall);
	check_sum(&a, &b);
}

SCENARIO(two_spinners_runq, "two spinners pinned to one CPU each wait about half the time in runq")
{
	struct t_diff d;
	pthread_barrier_t go;
	struct spinner s[2] = { { .go = &go, .ns = 400 * MS }, { .go = &go, .ns = 400 * MS } };
	pthread_t th[2];

	run_anywhere();
	pthread_barrier_init(&go, NULL, 2);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, spin_pinned, &s[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&go);
	for (int i = 0; i < 2; i++) {
		d = t_diff(&s[i].a, &s[i].b);
		t_print_diff("spinner on CPU 1", &s[i].a, &s[i].b);
		CHECK_TIMING(d.runq >= 0.25 * d.wall && d.runq <= 0.75 * d.wall,
			     "runq %.3f of wall %.3f ms, expected about half", d.runq, d.wall);
		CHECK_TIMING(d.cpu + d.runq >= 0.95 * d.wall, "cpu %.3f + runq %.3f of wall %.3f",
			     d.cpu, d.runq, d.wall);
		CHECK(s[i].b.p.nr_preempt > s[i].a.p.nr_preempt, "never preempted");
		CHECK_EQ(s[i].b.p.cpu, 1);
		check_sum(&s[i].a, &s[i].b);
	}
}

SCENARIO(wakeup_wait_in_runq,
	 "after a sleep, the wait for a busy CPU lands in runq_cyc, not sleep_cyc")
{
	struct csf_snap a, b;
	struct t_diff d;
	pthread_t hog, wk;
	struct waker w;
	uint64_t t0;
	double slept;
	int p[2];
	char c;

	REQUIRE(pipe(p) == 0, "pipe");
	w.fd = p[1];
	t_pin(1);
	pthread_create(&hog, NULL, rt_hog, NULL);
	t_snap(&a);
	pthread_create(&wk, NULL, waker, &w);
	/*
	 * Woken at 20 ms; the hog holds CPU 1 until about 50. The sleep is timed from here, not
	 * from before pthread_create(), which took 8 ms once under a loaded emulator.
	 */
	t0 = mono_ns();
	CHECK(read(p[0], &c, 1) == 1, "read");
	t_snap(&b);
	pthread_join(hog, NULL);
	pthread_join(wk, NULL);
	close(p[0]);
	close(p[1]);
	d = t_diff(&a, &b);
	t_print_diff("sleep 20 ms, then wait for a real-time hog", &a, &b);
	/*
	 * Asleep until the waker wrote (about 20 ms), then waiting for the hog (to about 50). The
	 * wakeup can reach CPU 1 late (8 ms once, under a loaded emulator): the sleep may run past
	 * the write, by no more than the wait after it, which would be gone had the wait been
	 * counted as sleep.
	 */
	slept = (double)(w.woke - t0) / 1e6;
	CHECK_TIMING(d.sleep > slept - 5 && d.sleep <= slept + d.runq,
		     "sleep %.3f ms, runq %.3f ms, woken after %.3f", d.sleep, d.runq, slept);
	CHECK_TIMING(d.runq >= 10, "runq %.3f ms, expected about 30", d.runq);
	/* The split is the scheduler's own: runq_cyc follows run_delay_ns. */
	CHECK_TIMING(fabs(d.runq - (double)(b.p.run_delay_ns - a.p.run_delay_ns) / 1e6) < 1,
		     "runq %.3f ms, run_delay %.3f ms", d.runq,
		     (double)(b.p.run_delay_ns - a.p.run_delay_ns) / 1e6);
	check_sum(&a, &b);
}

SCENARIO(runq_hist, "a runqueue wait of 20 ms or more lands in its log2 bucket of runq_us")
{
	struct csf_snap a, b;
	struct t_diff d;
	struct runq_hold h = { .hold_ns = 20 * MS };
	struct csf_thread_hist ha, hb;
	pthread_t hog, wk;
	double total_us, lo = 0, hi = 0;
	uint64_t n = 0;
	int top = -1;
	int p[2];
	char c;

	REQUIRE(pipe(p) == 0, "pipe");
	h.fd = p[1];
	t_pin(1);
	snap_hist(&a, &ha);
	/*
	 * The waker first, and on CPU 0 before the hog starts: created on CPU 1 (this
	 * thread's), it could not leave it behind the hog, which would hold CPU 1 until RT
	 * throttling stopped it (seen on 6.1).
	 */
	pthread_create(&wk, NULL, runq_waker, &h);
	while (!__atomic_load_n(&h.waker_on_cpu0, __ATOMIC_SEQ_CST))
		t_sleep_ns(MS);
	pthread_create(&hog, NULL, runq_hog, &h);
	/* Blocked here, or preempted by the hog before: either way runnable behind it. */
	CHECK(read(p[0], &c, 1) == 1, "read");
	snap_hist(&b, &hb);
	pthread_join(hog, NULL);
	pthread_join(wk, NULL);
	close(p[0]);
	close(p[1]);
	d = t_diff(&a, &b);
	t_print_diff("woken behind a real-time hog that holds the CPU 20 ms more", &a, &b);
	/*
	 * Each switch in counted its wait in one bucket, and the same wait in runq_cyc: the
	 * buckets' bounds bracket the total, whatever the load made of the waits.
	 */
	total_us = d.runq * 1000;
	for (int k = 0; k < CSF_HIST_BUCKETS; k++) {
		uint64_t cnt = hb.runq_us[k] - ha.runq_us[k];

		if (!cnt)
			continue;
		printf("#   runq_us[%d] +%llu\n", k, (unsigned long long)cnt);
		n += cnt;
		top = k;
		lo += cnt * bucket_lo_us(k);
		hi += cnt * bucket_hi_us(k);
	}
	printf("#   %llu waits, %.1f us in all\n", (unsigned long long)n, total_us);
	REQUIRE(n >= 1, "no runqueue wait counted in runq_us");
	/* 1% for the kernel's conversion to us, 1 us a wait for its rounding down. */
	CHECK(lo <= total_us * 1.01 + n, "buckets say at least %.1f us, runq_cyc %.1f us", lo,
	      total_us);
	CHECK(hi >= total_us * 0.99 - n, "buckets say under %.1f us, runq_cyc %.1f us", hi,
	      total_us);
	/* 20 ms is bucket 14, [16384, 32768) us; a loaded host only makes the wait longer. */
	CHECK(top >= 14, "the longest wait in bucket %d, under %.0f us", top, bucket_hi_us(top));
	CHECK_TIMING(top <= 20, "the longest wait in bucket %d, %.0f us or more", top,
		     bucket_lo_us(top));
	check_sum(&a, &b);
}

SCENARIO(vfork_dsleep, "a vfork parent waits in dsleep_cyc")
{
	struct csf_snap a, b;
	struct t_diff d;
	pid_t pid;

	run_anywhere();
	t_snap(&a);
	pid = vfork();
	if (pid == 0) {
		/* Only raw syscalls here: the child borrows the parent's memory. */
		struct timespec ts = { 0, 50 * MS };

		syscall(SYS_nanosleep, &ts, NULL);
		_exit(0);
	}
	t_snap(&b);
	waitpid(pid, NULL, 0);
	d = t_diff(&a, &b);
	t_print_diff("vfork, child sleeps 50 ms", &a, &b);
	CHECK_TIMING(d.dsleep >= 45, "dsleep %.3f ms, expected about 50", d.dsleep);
	CHECK_TIMING(d.sleep < 5, "sleep %.3f ms, expected about 0", d.sleep);
	check_sum(&a, &b);
}

SCENARIO(odirect_iowait, "O_DIRECT reads from a slow device land in iowait_cyc")
{
	/* The guest loads null_blk with a 10 ms completion delay (tests/harness/vm-inner.sh). */
	int fd = open("/dev/nullb0", O_RDONLY | O_DIRECT);
	struct csf_snap a, b;
	struct t_diff d;
	void *buf;

	run_anywhere();
	REQUIRE(fd >= 0, "open /dev/nullb0: %s", strerror(errno));
	REQUIRE(!posix_memalign(&buf, 4096, 4096), "posix_memalign");
	t_snap(&a);
	for (int i = 0; i < 5; i++)
		CHECK(pread(fd, buf, 4096, (off_t)i * 4096) == 4096, "pread: %s", strerror(errno));
	t_snap(&b);
	close(fd);
	free(buf);
	d = t_diff(&a, &b);
	t_print_diff("5 O_DIRECT reads of 10 ms", &a, &b);
	CHECK_TIMING(d.iowait >= 40, "iowait %.3f ms, expected about 50", d.iowait);
	CHECK_TIMING(d.iowait >= 0.7 * d.wall, "iowait %.3f of wall %.3f ms", d.iowait, d.wall);
	CHECK_EQ(b.p.read_bytes - a.p.read_bytes, 5 * 4096);
	CHECK(b.p.syscr - a.p.syscr >= 4, "syscr +%llu",
	      (unsigned long long)(b.p.syscr - a.p.syscr));
	check_sum(&a, &b);
}

SCENARIO(migrate_counted, "moving to another CPU counts in nr_migrate")
{
	struct csf_snap a, b;

	t_pin(0);
	t_sleep_ns(MS);
	t_snap(&a);
	REQUIRE(a.p.cpu == 0, "pinned to CPU 0 but page says %u", a.p.cpu);
	t_pin(1);
	t_sleep_ns(MS);
	t_snap(&b);
	CHECK_EQ(b.p.cpu, 1);
	CHECK(b.p.nr_migrate > a.p.nr_migrate, "nr_migrate stayed %llu",
	      (unsigned long long)a.p.nr_migrate);
	t_pin(0);
	t_sleep_ns(MS);
	t_snap(&b);
	CHECK(b.p.nr_migrate >= a.p.nr_migrate + 2, "nr_migrate %llu -> %llu",
	      (unsigned long long)a.p.nr_migrate, (unsigned long long)b.p.nr_migrate);
	check_sum(&a, &b);
}

SCENARIO(extrapolated_sum, "an extrapolated snapshot adds up to tsc - start_tsc")
{
	struct csf_snap a;
	uint64_t sum = 0;

	run_anywhere();
	t_snap(&a);
	for (int i = 0; i < CSF_NR_STATES; i++)
		sum += a.p.cyc[i];
	CHECK(a.extrapolated, "not extrapolated");
	CHECK(sum == a.tsc - a.p.start_tsc, "sum %llu, tsc - start %llu", (unsigned long long)sum,
	      (unsigned long long)(a.tsc - a.p.start_tsc));
	CHECK_EQ(a.p.state, CSF_ONCPU);
	CHECK_EQ(a.p.tid, gettid());
	CHECK_EQ(a.p.hdr.magic, CSF_MAGIC);
	CHECK_EQ(a.p.hdr.kind, CSF_KIND_THREAD);
}

SCENARIO(thread_cyc, "csf_thread_cyc() reads one bucket as a snapshot would")
{
	struct csf_snap a;
	uint64_t c0, c1;

	run_anywhere();
	REQUIRE(csf_thread_cyc(CSF_ONCPU, &c0) == 0, "csf_thread_cyc: %s", strerror(errno));
	t_spin_ns(20 * MS);
	t_snap(&a);
	REQUIRE(csf_thread_cyc(CSF_ONCPU, &c1) == 0, "csf_thread_cyc: %s", strerror(errno));
	CHECK_TIMING(c1 >= a.p.oncpu_cyc && t_ms(&a, c1 - c0) >= 19,
		     "oncpu %.3f ms; snapshot %llu, "
		     "csf_thread_cyc %llu",
		     t_ms(&a, c1 - c0), (unsigned long long)a.p.oncpu_cyc, (unsigned long long)c1);
	REQUIRE(csf_thread_cyc(CSF_SLEEP, &c0) == 0, "sleep bucket");
	CHECK_EQ(c0, a.p.sleep_cyc); /* not the current bucket: not extrapolated */
	CHECK_ERRNO(csf_thread_cyc(CSF_NR_STATES, &c0), EINVAL);
}

int main(void)
{
	struct csf_snap s;

	if (sched_getaffinity(0, sizeof(start_cpus), &start_cpus))
		t_die("sched_getaffinity");
	/*
	 * The library maps the main thread's page at its first snapshot and keeps it until the
	 * thread exits: map it here, so that no scenario, run alone or after others, measures it.
	 */
	t_snap(&s);
	return t_main("t_thread");
}
