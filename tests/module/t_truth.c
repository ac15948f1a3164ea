// SPDX-License-Identifier: GPL-2.0
/*
 * t_truth: the page against the kernel's own numbers, over mixed work.
 *
 *   oncpu_cyc     vs  /proc/thread-self/schedstat runtime       within a few percent
 *   runq_cyc      vs  /proc/thread-self/schedstat run delay     within a few percent
 *   nr_block, nr_preempt  vs  /proc/thread-self/status ctxt switches   exactly
 *   min_flt, maj_flt      vs  getrusage(RUSAGE_THREAD)                 exactly
 *   the six I/O fields    vs  /proc/thread-self/io                     exactly
 *
 * The counters are exact at a switch boundary: right after a sleep, before the thread does
 * anything those counters count. A tick can still preempt the thread between the snapshot and
 * the kernel's numbers; such a reading is taken again.
 */
#include "../t.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define MS 1000000ull

struct truth {
	struct csf_snap s;
	uint64_t runtime_ns, run_delay_ns; /* schedstat */
	uint64_t vcsw, ivcsw; /* status */
	uint64_t minflt, majflt; /* getrusage */
	uint64_t rchar, wchar, syscr, syscw, read_bytes, write_bytes; /* io */
};

/* Read a small /proc file into buf, with one read() (so its own accounting comes after). */
static void read_proc(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		t_die("open %s", path);
	n = read(fd, buf, len - 1);
	if (n < 0)
		t_die("read %s", path);
	buf[n] = 0;
	close(fd);
}

static uint64_t field(const char *buf, const char *name)
{
	const char *p = strstr(buf, name);

	if (!p)
		t_die("no %s in /proc output", name);
	return strtoull(p + strlen(name), NULL, 10);
}

/*
 * Take a snapshot and the kernel's numbers together, right after a switch. Each reading counts
 * in the next one's numbers (a read of /proc is a read syscall), so what is compared exactly is
 * what the kernel said before the reading began.
 */
static void take(struct truth *t)
{
	char io[512], status[2048], sched[128];
	struct rusage ru;

	t_sleep_ns(100000); /* a switch: the page's counters are fresh */
	t_snap(&t->s);
	getrusage(RUSAGE_THREAD, &ru); /* no fault between the two: everything is in cache */
	read_proc("/proc/thread-self/io", io, sizeof(io));
	read_proc("/proc/thread-self/schedstat", sched, sizeof(sched));
	/* Last: if its switch counts match the page, nothing above came after a switch. */
	read_proc("/proc/thread-self/status", status, sizeof(status));

	t->minflt = (uint64_t)ru.ru_minflt;
	t->majflt = (uint64_t)ru.ru_majflt;
	t->rchar = field(io, "rchar: ");
	t->wchar = field(io, "wchar: ");
	t->syscr = field(io, "syscr: ");
	t->syscw = field(io, "syscw: ");
	t->read_bytes = field(io, "\nread_bytes: ");
	t->write_bytes = field(io, "\nwrite_bytes: ");
	t->vcsw = field(status, "\nvoluntary_ctxt_switches:");
	t->ivcsw = field(status, "nonvoluntary_ctxt_switches:");
	if (sscanf(sched, "%" SCNu64 " %" SCNu64, &t->runtime_ns, &t->run_delay_ns) != 2)
		t_die("schedstat: %s", sched);
}

/* The counters of a reading agree with the page when no switch came between them. */
static bool counters_match(const struct truth *t)
{
	const struct csf_thread_page *p = &t->s.p;

	return p->nr_block == t->vcsw && p->nr_preempt == t->ivcsw && p->min_flt == t->minflt &&
	       p->maj_flt == t->majflt && p->rchar == t->rchar && p->wchar == t->wchar &&
	       p->syscr == t->syscr && p->syscw == t->syscw && p->read_bytes == t->read_bytes &&
	       p->write_bytes == t->write_bytes;
}

/*
 * A fully preemptible kernel (the debug suite's) preempts the reads of /proc often under
 * emulation: many tries may be needed for one without a switch.
 */
static void take_exact(struct truth *t)
{
	for (int i = 0; i < 200; i++) {
		take(t);
		if (counters_match(t))
			return;
	}
}

static void check_counters(const struct truth *t)
{
	const struct csf_thread_page *p = &t->s.p;

	if (!counters_match(t) && t_timing_loose()) {
		printf("#   timing, not enforced on this kernel: no reading without a switch\n");
		return;
	}

	CHECK_EQ(p->nr_block, t->vcsw);
	CHECK_EQ(p->nr_preempt, t->ivcsw);
	CHECK_EQ(p->min_flt, t->minflt);
	CHECK_EQ(p->maj_flt, t->majflt);
	CHECK_EQ(p->rchar, t->rchar);
	CHECK_EQ(p->wchar, t->wchar);
	CHECK_EQ(p->syscr, t->syscr);
	CHECK_EQ(p->syscw, t->syscw);
	CHECK_EQ(p->read_bytes, t->read_bytes);
	CHECK_EQ(p->write_bytes, t->write_bytes);
}

/* Within 3% and 0.5 ms, plus 0.2 ms per switch (see nr_switches()). */
static bool close_enough(double ours, double theirs, double switches)
{
	return fabs(ours - theirs) <= theirs * 0.03 + 0.5 + 0.2 * switches;
}

static volatile int stop;

static void *competitor(void *arg)
{
	(void)arg;
	t_pin(1);
	while (!stop)
		;
	return NULL;
}

/* Mixed work on CPU 1, shared with a spinner: CPU, runqueue wait, sleep, faults, I/O. */
static void mixed_work(void)
{
	static char buf[65536];
	int fd = open("/tmp/t_truth.dat", O_RDWR | O_CREAT | O_TRUNC, 0600);
	int p[2];

	if (fd < 0 || pipe(p))
		t_die("open/pipe");
	for (int round = 0; round < 8; round++) {
		char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		t_spin_ns(10 * MS);
		for (int i = 0; i < (1 << 20); i += 4096)
			m[i] = 1; /* minor faults */
		munmap(m, 1 << 20);
		if (write(fd, buf, sizeof(buf)) != sizeof(buf) || write(p[1], buf, 100) != 100)
			t_die("write");
		if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf) || read(p[0], buf, 100) != 100)
			t_die("read");
		t_sleep_ns(5 * MS);
	}
	fsync(fd); /* storage writes, where /tmp has storage */
	close(fd);
	close(p[0]);
	close(p[1]);
	unlink("/tmp/t_truth.dat");
}

/*
 * The readings before and after mixed work on CPU 1, shared with a spinner: each scenario
 * measures a run of its own.
 */
static void measure(struct truth *a, struct truth *b)
{
	pthread_t th;

	t_pin(1);
	stop = 0;
	pthread_create(&th, NULL, competitor, NULL);
	t_sleep_ns(20 * MS);

	take_exact(a);
	mixed_work();
	take_exact(b);
	stop = 1;
	pthread_join(th, NULL);
	t_print_diff("mixed work", &a->s, &b->s);
}

/*
 * The page and the scheduler draw the line between a thread's time on and off the CPU at
 * slightly different places: the scheduler's clocks stop and start when it picks the next
 * thread, the page's when the switch is done. So each switch moves its own duration (from
 * picking the thread to finishing the switch) between the two views, and under emulation a
 * switch takes tens of microseconds: allow 0.2 ms per switch, on top of 3%.
 */
static double nr_switches(const struct truth *a, const struct truth *b)
{
	return (double)(b->s.p.nr_block + b->s.p.nr_preempt - a->s.p.nr_block - a->s.p.nr_preempt);
}

SCENARIO(work_mix, "the work took at least 100 ms, with CPU time, runqueue wait and sleep")
{
	struct truth a, b;
	struct t_diff d;

	measure(&a, &b);
	d = t_diff(&a.s, &b.s);
	CHECK(d.wall >= 100, "wall %.3f ms", d.wall);
	CHECK(d.cpu > 10 && d.runq > 10 && d.sleep > 10, "cpu %.3f runq %.3f sleep %.3f", d.cpu,
	      d.runq, d.sleep);
}

SCENARIO(oncpu_vs_runtime, "oncpu_cyc matches schedstat's runtime within 3%, plus the switches")
{
	struct truth a, b;
	double ours, theirs, nsw;

	measure(&a, &b);
	ours = t_ms(&b.s, b.s.p.oncpu_cyc - a.s.p.oncpu_cyc);
	theirs = (double)(b.runtime_ns - a.runtime_ns) / 1e6;
	nsw = nr_switches(&a, &b);
	printf("#   oncpu %.3f ms, schedstat runtime %.3f ms, %.0f switches\n", ours, theirs, nsw);
	CHECK_TIMING(close_enough(ours, theirs, nsw), "oncpu %.3f ms, schedstat %.3f ms", ours,
		     theirs);
}

SCENARIO(runq_vs_run_delay, "runq_cyc matches schedstat's run delay within 3%, plus the switches")
{
	struct truth a, b;
	double ours, theirs, nsw;

	measure(&a, &b);
	ours = t_ms(&b.s, b.s.p.runq_cyc - a.s.p.runq_cyc);
	theirs = (double)(b.run_delay_ns - a.run_delay_ns) / 1e6;
	nsw = nr_switches(&a, &b);
	printf("#   runq %.3f ms, schedstat run delay %.3f ms, %.0f switches\n", ours, theirs, nsw);
	CHECK_TIMING(close_enough(ours, theirs, nsw), "runq %.3f ms, schedstat %.3f ms", ours,
		     theirs);
}

SCENARIO(counters_exact, "switch, fault and I/O counters equal the kernel's at a switch boundary")
{
	struct truth a, b;

	measure(&a, &b);
	check_counters(&a);
	check_counters(&b);
	CHECK(b.s.p.min_flt - a.s.p.min_flt >= 8ull * 256, "only %llu minor faults",
	      (unsigned long long)(b.s.p.min_flt - a.s.p.min_flt));
	CHECK(b.s.p.wchar - a.s.p.wchar >= 8ull * 65536, "wchar +%llu",
	      (unsigned long long)(b.s.p.wchar - a.s.p.wchar));
	CHECK(b.s.p.nr_preempt > a.s.p.nr_preempt, "no preemption counted");
}

SCENARIO(scheduler_values, "sum_exec_ns and run_delay_ns are the scheduler's own values")
{
	struct truth a, b;

	measure(&a, &b);
	/* run_delay_ns is fresh as of the switch in, so it equals schedstat's exactly. */
	CHECK_TIMING(b.s.p.run_delay_ns == b.run_delay_ns, "run_delay_ns %llu, schedstat %llu",
		     (unsigned long long)b.s.p.run_delay_ns, (unsigned long long)b.run_delay_ns);
	CHECK(b.s.p.sum_exec_ns <= b.runtime_ns, "sum_exec_ns %llu > schedstat %llu",
	      (unsigned long long)b.s.p.sum_exec_ns, (unsigned long long)b.runtime_ns);
}

int main(void)
{
	return t_main("t_truth");
}
