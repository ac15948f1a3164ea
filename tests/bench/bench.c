// SPDX-License-Identifier: GPL-2.0
/*
 * bench: what a snapshot and a context switch cost, next to the alternatives, in one run.
 *
 * 1. Cost per call of each way to learn where a thread's time went (and of the floor, the bare
 *    counter read: rdtscp, or isb; mrs cntvct_el0 on arm64), median and p99, in ns and counter
 *    cycles, and as a ratio to the vDSO's clock_gettime(CLOCK_MONOTONIC) measured in the same
 *    run. Calls are timed in batches of BATCH with that read, so the timer's own cost is spread
 *    over the batch.
 * 2. Cost of a context switch: two threads pass a byte back and forth through pipes, on one CPU
 *    and across two, unregistered, registered with coarse_stat_fs, and each with a perf
 *    task-clock event instead.
 * 3. Memory: kernel memory per registered thread (memory cgroup "kernel" counter), and what the
 *    cpu page costs.
 * 4. "bench --fpu", alone (a guest test of its own, fpu-bench): FPU save and restore: the
 *    module's calibrated table (csfcat fpu), the cost a context switch gains while the csf_fpu
 *    events (their probes) are on, and the table those events give for the same switches
 *    (csfcat fpu-report), to set beside the calibrated one.
 *
 * Prints tables, and whether the targets of docs/cost.md hold, as ratios. It fails only when it
 * cannot measure; numbers are for reading, not for judging (the machines are shared and often
 * emulated). Run it with memory debugging off: VM_DEBUG=0 tests/debian/run.sh trixie bench.
 *
 * "bench --slices" measures what the long-slice watch (slice_warn_us) adds to a context switch:
 * with no module loaded, with the module and the watch off, with the watch on, with the
 * kernel's own sched_switch trace event recording instead, as perf and trace-cmd record it, and
 * with a bpftrace program doing the watch's bookkeeping at sched_switch instead (Debian's
 * bpftrace, which tests/debian/bpftrace-stage.sh stages as /csf/bpftrace/bpftrace; without it
 * that mode is skipped). It unloads and reloads the module (/csf/coarse_stat_fs.ko) itself, so
 * it registers no thread.
 *
 * "bench --reader" needs no module: it runs the first table on whatever CPU runs it, with the
 * library's reader (csf_page_snap(), csf_page_cyc()) on an ordinary page laid out as the
 * kernel lays out a thread page. Under emulation every memory access is expensive and the
 * page copy dominates; this shows what the same code costs on a real CPU ("make bench-reader").
 */
#include "../t.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BATCH 16
#define SAMPLES 20000
#define MS 1000000ull

static uint64_t samples[SAMPLES];
static const struct csf_hdr *hdr; /* for cycle to ns conversion */

static double ns(double cyc)
{
	return cyc * 1e9 / (double)hdr->tsc_hz;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct cost {
	const char *name;
	double med, p99; /* cycles per call */
	const char *note;
};

static struct cost costs[32];
static int ncosts;

static void record(const char *name, const char *note)
{
	struct cost *c = &costs[ncosts++];

	qsort(samples, SAMPLES, sizeof(samples[0]), cmp_u64);
	c->name = name;
	const size_t median = SAMPLES / 2, p99 = SAMPLES * 99 / 100;

	c->med = (double)samples[median] / BATCH;
	c->p99 = (double)samples[p99] / BATCH;
	c->note = note;
}

/* The floor: the bare counter read, csf_rdtsc(), as every snapshot makes it. */
#if defined(__x86_64__)
#define FLOOR_READ "rdtscp"
#define FLOOR FLOOR_READ " (the floor)"
#define COUNTER "TSC"
#define COUNTER_ID CSF_COUNTER_TSC
#else
#define FLOOR_READ "isb; mrs cntvct_el0"
#define FLOOR FLOOR_READ " (the floor)"
#define COUNTER "CNTVCT"
#define COUNTER_ID CSF_COUNTER_CNTVCT
#endif

/* Time the statement: SAMPLES batches of BATCH, after a warm-up; a barrier between calls. */
#define MEASURE(name, note, ...)                                   \
	do {                                                       \
		for (int w_ = 0; w_ < 2000; w_++) {                \
			__VA_ARGS__;                               \
		}                                                  \
		for (int s_ = 0; s_ < SAMPLES; s_++) {             \
			uint64_t t0_ = csf_rdtsc();                \
			for (int b_ = 0; b_ < BATCH; b_++) {       \
				__VA_ARGS__;                       \
				__asm__ volatile("" ::: "memory"); \
			}                                          \
			samples[s_] = csf_rdtsc() - t0_;           \
		}                                                  \
		record(name, note);                                \
	} while (0)

static const struct cost *find(const char *name)
{
	for (int i = 0; i < ncosts; i++)
		if (!strcmp(costs[i].name, name))
			return &costs[i];
	t_die("no cost named %s", name);
}

/* ---- perf ---- */

static int perf_task_clock(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.exclude_hv = 1,
	};

	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

/*
 * A task-clock value read through the event's mmap page, as perf_event.h documents: the count at
 * the last update plus, with cap_user_time, the running time since, from the TSC.
 */
static uint64_t perf_mmap_read(const struct perf_event_mmap_page *pc)
{
	uint64_t count, running, enabled, cyc, quot, rem, delta = 0;
	uint32_t seq;

	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		enabled = pc->time_enabled;
		running = pc->time_running;
		count = (uint64_t)pc->offset;
		if (pc->cap_user_time && enabled != running) {
			cyc = csf_rdtsc();
			quot = cyc >> pc->time_shift;
			rem = cyc & (((uint64_t)1 << pc->time_shift) - 1);
			delta = pc->time_offset + quot * pc->time_mult +
				((rem * pc->time_mult) >> pc->time_shift);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq);
	return count + delta;
}

/* ---- 1. Cost per call ---- */

static void bench_calls(const struct csf_thread_page *fake)
{
	struct csf_snap s;
	struct csf_cpu_snap c;
	struct timespec ts;
	struct rusage ru;
	uint64_t v;
	char buf[4096];
	int sfd = open("/proc/thread-self/schedstat", O_RDONLY);
	int statfd = open("/proc/stat", O_RDONLY);
	int pfd = perf_task_clock();
	struct perf_event_mmap_page *pc = NULL;

	if (sfd < 0 || statfd < 0)
		t_die("open /proc");
	if (pfd >= 0) {
		pc = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, pfd, 0);
		if (pc == MAP_FAILED)
			pc = NULL;
	}

	static struct csf_thread_page copy;
	const struct csf_thread_page *src = fake ? fake : (const void *)csf__thread.page;

	MEASURE(FLOOR, "", v = csf_rdtsc());
	/* What a snapshot adds to the floor: copying the page. */
	MEASURE("copy of the 256-byte page", "memcpy, no seqcount, no TSC",
		memcpy(&copy, src, sizeof(copy)));
	MEASURE("clock_gettime(MONOTONIC), vDSO", "the reference",
		clock_gettime(CLOCK_MONOTONIC, &ts));
	if (fake) {
		MEASURE("csf_thread_snap()", "csf_page_snap(), an ordinary page",
			csf_page_snap(fake, &s));
		MEASURE("csf_thread_cyc(CSF_ONCPU)", "csf_page_cyc(), an ordinary page",
			v = csf_page_cyc(fake, CSF_ONCPU));
	} else {
		MEASURE("csf_thread_snap()", "all fields, extrapolated", csf_thread_snap(&s));
		MEASURE("csf_thread_cyc(CSF_ONCPU)", "one bucket, extrapolated",
			csf_thread_cyc(CSF_ONCPU, &v));
	}
	MEASURE("clock_gettime(THREAD_CPUTIME_ID)", "syscall",
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts));
	MEASURE("getrusage(RUSAGE_THREAD)", "syscall", getrusage(RUSAGE_THREAD, &ru));
	MEASURE("pread /proc/thread-self/schedstat", "kept descriptor",
		if (pread(sfd, buf, sizeof(buf), 0) < 0) t_die("pread"));
	MEASURE("open+read+close schedstat", "", {
		int fd_ = open("/proc/thread-self/schedstat", O_RDONLY);
		if (fd_ < 0 || read(fd_, buf, sizeof(buf)) < 0)
			t_die("schedstat");
		close(fd_);
	});
	if (pc && pc->cap_user_time)
		MEASURE("perf task-clock, mmap page", "cap_user_time", v = perf_mmap_read(pc));
	if (pfd >= 0)
		MEASURE("perf task-clock, read()", "syscall",
			if (read(pfd, &v, sizeof(v)) != sizeof(v)) t_die("perf read"));
	if (!fake)
		MEASURE("csf_cpu_snap(CSF_CPU_ALL)", "all CPUs, as of the last refresh",
			csf_cpu_snap(&c, CSF_CPU_ALL));
	MEASURE("pread /proc/stat", "kept descriptor, no parsing",
		if (pread(statfd, buf, sizeof(buf), 0) < 0) t_die("pread /proc/stat"));
	(void)v;

	const struct cost *ref = find("clock_gettime(MONOTONIC), vDSO");

	printf("\n1. Cost per call (batches of %d, %d batches)\n\n", BATCH, SAMPLES);
	printf("%-36s %10s %10s %10s %10s %8s  %s\n", "method", "median ns", "p99 ns", "median cyc",
	       "p99 cyc", "x vDSO", "");
	for (int i = 0; i < ncosts; i++) {
		const struct cost *c = &costs[i];

		printf("%-36s %10.1f %10.1f %10.0f %10.0f %8.2f  %s\n", c->name, ns(c->med),
		       ns(c->p99), c->med, c->p99, c->med / ref->med, c->note);
	}
	if (!pc || !pc->cap_user_time)
		printf("(perf task-clock through its mmap page: not offered here, %s)\n",
		       pfd < 0 ? "perf_event_open failed" :
				 "cap_user_time is 0: the kernel does not trust this TSC");

	const struct cost *snap = find("csf_thread_snap()");
	const struct cost *ru_c = find("getrusage(RUSAGE_THREAD)");

	printf("\ntarget: csf_thread_snap() at most 1.5x vDSO clock_gettime: %.2fx, %s\n",
	       snap->med / ref->med, snap->med <= 1.5 * ref->med ? "met" : "NOT met");
	printf("target: csf_thread_snap() at least 20x cheaper than getrusage(RUSAGE_THREAD): "
	       "%.1fx, %s\n",
	       ru_c->med / snap->med, ru_c->med >= 20 * snap->med ? "met" : "NOT met");
	printf("        (for scale: %s alone is %.1fx cheaper than getrusage, the copy %.0f%% "
	       "of a snapshot)\n",
	       FLOOR_READ, ru_c->med / find(FLOOR)->med,
	       100 * find("copy of the 256-byte page")->med / snap->med);
	if (pc)
		munmap(pc, (size_t)sysconf(_SC_PAGESIZE));
	if (pfd >= 0)
		close(pfd);
	close(sfd);
	close(statfd);
}

/* ---- 2. Context switches ---- */

enum mode { PLAIN, CSF, PERF, NR_MODES };
static const char *const mode_name[NR_MODES] = { "unregistered", "coarse_stat_fs",
						 "perf task-clock" };

struct pingpong {
	int to_b[2], to_a[2];
	int cpu_a, cpu_b;
	enum mode mode;
	int iters;
	pthread_barrier_t ready;
};

static int instrument(enum mode mode)
{
	struct csf_snap s;

	if (mode == CSF && csf_thread_snap(&s))
		t_die("csf_thread_snap");
	if (mode == PERF) {
		int fd = perf_task_clock();

		if (fd < 0)
			t_die("perf_event_open(task-clock)");
		return fd;
	}
	return -1;
}

static void *pong(void *arg)
{
	struct pingpong *p = arg;
	char c;
	int fd;

	t_pin(p->cpu_b);
	fd = instrument(p->mode);
	pthread_barrier_wait(&p->ready);
	for (int i = 0; i < p->iters; i++)
		if (read(p->to_b[0], &c, 1) != 1 || write(p->to_a[1], &c, 1) != 1)
			t_die("pong");
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* ns per round trip: A writes to B, B answers. */
static double round_trip(int cpu_a, int cpu_b, enum mode mode, int iters)
{
	struct pingpong p = { .cpu_a = cpu_a, .cpu_b = cpu_b, .mode = mode, .iters = iters };
	pthread_t th;
	uint64_t t0, t1;
	char c = 0;
	int fd;

	if (pipe(p.to_b) || pipe(p.to_a))
		t_die("pipe");
	pthread_barrier_init(&p.ready, NULL, 2);
	pthread_create(&th, NULL, pong, &p);
	t_pin(cpu_a);
	fd = instrument(mode);
	pthread_barrier_wait(&p.ready);
	t0 = mono_ns();
	for (int i = 0; i < iters; i++)
		if (write(p.to_b[1], &c, 1) != 1 || read(p.to_a[0], &c, 1) != 1)
			t_die("ping");
	t1 = mono_ns();
	pthread_join(th, NULL);
	if (fd >= 0)
		close(fd);
	close(p.to_b[0]);
	close(p.to_b[1]);
	close(p.to_a[0]);
	close(p.to_a[1]);
	pthread_barrier_destroy(&p.ready);
	return (double)(t1 - t0) / iters;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void bench_switches(void)
{
	enum { RUNS = 11, ITERS = 5000 };
	static const struct {
		const char *name;
		int cpu_a, cpu_b;
	} where[] = { { "one CPU", 0, 0 }, { "two CPUs", 0, 1 } };
	double med[2][NR_MODES], noise[2] = { 0, 0 };

	printf("\n2. Context switches: a byte back and forth through two pipes, %d round trips, "
	       "median of %d runs\n\n",
	       ITERS, RUNS);
	printf("%-10s %-16s %16s %16s %18s\n", "threads on", "each thread", "ns per round trip",
	       "added ns / trip", "added ns / switch");
	for (int w = 0; w < 2; w++) {
		double r[NR_MODES][RUNS];

		/* Modes take turns, so that drift in the machine's speed hits them alike. */
		for (int i = 0; i < RUNS; i++)
			for (int m = 0; m < NR_MODES; m++)
				r[m][i] = round_trip(where[w].cpu_a, where[w].cpu_b, (enum mode)m,
						     ITERS);
		for (int m = 0; m < NR_MODES; m++) {
			qsort(r[m], RUNS, sizeof(r[m][0]), cmp_double);
			med[w][m] = r[m][RUNS / 2];
		}
		/* Half the spread between the quartiles of one mode's runs: below it is noise. */
		noise[w] = (r[PLAIN][RUNS * 3 / 4] - r[PLAIN][RUNS / 4]) / 2;
		for (int m = 0; m < NR_MODES; m++) {
			double added = med[w][m] - med[w][PLAIN];

			/* A round trip switches each thread out once and in once. */
			printf("%-10s %-16s %16.0f %16.0f %18.0f\n", where[w].name, mode_name[m],
			       med[w][m], added, added / 2);
		}
	}
	for (int w = 0; w < 2; w++) {
		double ours = med[w][CSF] - med[w][PLAIN], perf = med[w][PERF] - med[w][PLAIN];

		printf("target: added cost per switch below perf task-clock's (%s): %.0f ns vs %.0f "
		       "ns, %s (runs of one mode spread by about %.0f ns per switch)\n",
		       where[w].name, ours / 2, perf / 2, ours < perf ? "met" : "NOT met",
		       noise[w] / 2);
	}
}

/* ---- 3. Memory ---- */

#define CG "/sys/fs/cgroup"
#define CG_BENCH CG "/csf-bench"

static void write_str(const char *path, const char *s)
{
	if (file_write(path, s))
		t_die("write %s to %s", s, path);
}

static long long kernel_bytes(void)
{
	char buf[8192], *p;
	int fd = open(CG_BENCH "/memory.stat", O_RDONLY);
	ssize_t n;

	if (fd < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		t_die("memory.stat");
	close(fd);
	buf[n] = 0;
	p = strstr(buf, "\nkernel ");
	if (!p)
		t_die("no kernel counter in memory.stat");
	return strtoll(p + 8, NULL, 10);
}

static pthread_barrier_t hold;
static int hold_register;

static void *holder(void *arg)
{
	struct csf_snap s;

	(void)arg;
	if (hold_register && csf_thread_snap(&s))
		t_die("csf_thread_snap");
	pthread_barrier_wait(&hold); /* registered (or not) */
	pthread_barrier_wait(&hold); /* measured: exit */
	return NULL;
}

/* Kernel memory charged while N threads live, registered or not. */
static long long threads_cost(int n, int reg)
{
	static pthread_t th[512];
	long long before, after;

	hold_register = reg;
	pthread_barrier_init(&hold, NULL, (unsigned int)n + 1);
	before = kernel_bytes();
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, holder, NULL))
			t_die("pthread_create");
	pthread_barrier_wait(&hold);
	t_sleep_ns(50 * MS);
	after = kernel_bytes();
	pthread_barrier_wait(&hold);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&hold);
	return after - before;
}

static void bench_memory(void)
{
	enum { N = 256, RUNS = 3 };
	long long plain = 0, reg = 0;
	char pid[32];
	struct stat st;

	printf("\n3. Memory\n\n");
	if (stat(CG "/cgroup.controllers", &st) && mount("none", CG, "cgroup2", 0, NULL))
		t_die("mount cgroup2");
	write_str(CG "/cgroup.subtree_control", "+memory");
	mkdir(CG_BENCH, 0755);
	snprintf(pid, sizeof(pid), "%d", getpid());
	write_str(CG_BENCH "/cgroup.procs", pid);

	for (int i = 0; i < RUNS; i++) {
		plain += threads_cost(N, 0);
		reg += threads_cost(N, 1);
	}
	printf("kernel memory per thread, %d threads, mean of %d runs (memory cgroup \"kernel\"):\n",
	       N, RUNS);
	printf("  unregistered thread                      %8.0f bytes\n",
	       (double)plain / RUNS / N);
	printf("  registered through the library           %8.0f bytes\n", (double)reg / RUNS / N);
	printf("  added by registering                     %8.0f bytes (object, page, file, mapping)\n",
	       (double)(reg - plain) / RUNS / N);

	int fd = open(CSF_MOUNT_POINT "/" CSF_CPU_FILE, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		t_die("cpu page");
	close(fd);
	printf("cpu page: %lld bytes mapped for %d possible CPUs, plus as much again for the rows\n"
	       "  being built, allocated only while someone has the file open or mapped\n",
	       (long long)st.st_size, csf_cpu_count());
}

/* ---- 4. FPU save and restore ---- */

#define TRACING "/sys/kernel/tracing"

static void shell(const char *cmd)
{
	fflush(stdout);
	if (system(cmd))
		t_die("%s", cmd);
}

static void bench_fpu(void)
{
	enum { RUNS = 11, ITERS = 5000 };
	static const struct {
		const char *name;
		int cpu_a, cpu_b;
	} where[] = { { "one CPU", 0, 0 }, { "two CPUs", 0, 1 } };
	struct stat st;

	printf("\n4. FPU save and restore\n\n");
	shell("csfcat fpu --samples 2000");
	if (stat(TRACING "/events", &st) && mount("nodev", TRACING, "tracefs", 0, NULL))
		t_die("mount tracefs");
	write_str(TRACING "/trace", "");
	printf("\nContext switches with the csf_fpu events off and on (probes on the kernel's save "
	       "and restore, events into the trace buffer), %d round trips, median of %d runs\n\n",
	       ITERS, RUNS);
	printf("%-10s %-8s %16s %18s\n", "threads on", "events", "ns per round trip",
	       "added ns / switch");
	for (int w = 0; w < 2; w++) {
		double r[2][RUNS], med[2], noise;

		for (int i = 0; i < RUNS; i++) /* off and on take turns, as drift hits both */
			for (int on = 0; on < 2; on++) {
				write_str(TRACING "/events/csf_fpu/enable", on ? "1" : "0");
				r[on][i] = round_trip(where[w].cpu_a, where[w].cpu_b, PLAIN, ITERS);
			}
		write_str(TRACING "/events/csf_fpu/enable", "0");
		for (int on = 0; on < 2; on++) {
			qsort(r[on], RUNS, sizeof(r[on][0]), cmp_double);
			med[on] = r[on][RUNS / 2];
		}
		noise = (r[0][RUNS * 3 / 4] - r[0][RUNS / 4]) / 2;
		printf("%-10s %-8s %16.0f %18s\n", where[w].name, "off", med[0], "0");
		printf("%-10s %-8s %16.0f %18.0f (runs with the events off spread by about %.0f ns "
		       "per switch)\n",
		       where[w].name, "on", med[1], (med[1] - med[0]) / 2, noise / 2);
	}
	printf("\nThe probes (/sys/kernel/debug/coarse_stat_fs/fpu_live):\n");
	shell("cat /sys/kernel/debug/coarse_stat_fs/fpu_live");
	printf("\nWhat the events said of those switches (latency in ns; TSC %.1f MHz):\n",
	       (double)hdr->tsc_hz / 1e6);
	shell("csfcat fpu-report " TRACING "/trace");
	write_str(TRACING "/trace", "");
}

/* The TSC's rate against CLOCK_MONOTONIC, for a run without the module's header. */
/* ---- 4. The long-slice watch ---- */

#define TRACING "/sys/kernel/tracing"
#define WARN "/sys/module/coarse_stat_fs/parameters/slice_warn_us"
#define WATCH_US 50000 /* the watch's threshold, and the bpftrace program's */
/* Debian's bpftrace, where tests/debian/bpftrace-stage.sh staged it for this boot. */
#define BPFTRACE "/csf/bpftrace/bpftrace"
#define BPF_READY "csf-bench: attached"
#define BPF_LONG "long slice:"
#define BPF_ATTACH_S 600 /* how long bpftrace may take to compile and attach, emulated */

enum wmode { W_NOMODULE, W_OFF, W_ON, W_FTRACE, W_BPFTRACE, NR_WMODES };
static const char *const wmode_name[NR_WMODES] = { "no module", "module, watch off",
						   "watch on (50 ms)", "ftrace sched_switch",
						   "bpftrace sched_switch" };

/*
 * The watch's bookkeeping in bpftrace, as a user who wants long slices would write it: when
 * each CPU's slice began, and at each switch, the outgoing task's slice (not the idle task's)
 * against the threshold, the long ones printed. BEGIN runs once every probe is attached.
 */
static char bpf_prog[1024];
static struct {
	int usable; /* 1 while it attaches; 0 once it did not, or is not in this guest */
	pid_t pid;
	int out; /* its stdout and stderr */
	char line[512];
	size_t len;
	double attach_s[32]; /* how long each start took to attach */
	int starts, long_slices;
} bpft;

static void bpftrace_prog(void)
{
	snprintf(bpf_prog, sizeof(bpf_prog),
		 "BEGIN { printf(\"%s\\n\"); }\n"
		 "tracepoint:sched:sched_switch {\n"
		 "	$now = nsecs;\n"
		 "	$start = @start[cpu];\n"
		 "	if (args.prev_pid != 0 && $start != 0 && $now - $start >= (uint64)%llu) {\n"
		 "		printf(\"%s %%s (pid %%d) %%d ms on CPU %%d\\n\", args.prev_comm,\n"
		 "		       args.prev_pid, ($now - $start) / 1000000, cpu);\n"
		 "	}\n"
		 "	@start[cpu] = $now;\n"
		 "}\n"
		 "END { clear(@start); }\n",
		 BPF_READY, WATCH_US * 1000ull, BPF_LONG);
}

/*
 * The next line bpftrace wrote, without its newline, within timeout_s: 1, or 0 at its end of
 * output or past the timeout (-1: for as long as it takes).
 */
static int bpftrace_line(int timeout_s)
{
	uint64_t end = mono_ns() + (uint64_t)timeout_s * 1000000000ull;

	bpft.len = 0;
	for (;;) {
		struct pollfd pfd = { .fd = bpft.out, .events = POLLIN };
		char c;

		if (timeout_s >= 0) {
			uint64_t now = mono_ns();

			if (now >= end || poll(&pfd, 1, (int)((end - now) / 1000000) + 1) == 0)
				return 0;
		}
		if (read(bpft.out, &c, 1) != 1)
			return 0;
		if (c == '\n')
			break;
		if (bpft.len < sizeof(bpft.line) - 1)
			bpft.line[bpft.len++] = c;
	}
	bpft.line[bpft.len] = 0;
	if (!strncmp(bpft.line, BPF_LONG, strlen(BPF_LONG)))
		bpft.long_slices++;
	return 1;
}

/* Stop bpftrace with sig, read what it still writes, and reap it: its wait status. */
static int bpftrace_end(int sig)
{
	int status;

	kill(bpft.pid, sig);
	while (bpftrace_line(-1))
		;
	close(bpft.out);
	if (waitpid(bpft.pid, &status, 0) != bpft.pid)
		t_die("waitpid bpftrace");
	return status;
}

static void bpftrace_stop(void)
{
	int status = bpftrace_end(SIGINT); /* it runs END and exits */

	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "bpftrace stopped by SIGINT: exit status 0x%x", status);
}

/*
 * Start bpftrace and wait until its probes are attached; when they are not, it is unusable.
 * What it says before, it says the same each time: shown the first time, or when it fails.
 */
static void bpftrace_start(void)
{
	static char said[4096];
	uint64_t t0 = mono_ns();
	size_t n;
	int p[2];

	if (pipe(p))
		t_die("pipe");
	fflush(stdout);
	bpft.pid = fork();
	if (bpft.pid < 0)
		t_die("fork");
	if (!bpft.pid) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		execl(BPFTRACE, "bpftrace", "-B", "line", "-e", bpf_prog, (char *)NULL);
		printf("exec %s: %s\n", BPFTRACE, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	bpft.out = p[0];
	said[0] = 0;
	while (bpftrace_line(BPF_ATTACH_S)) {
		if (!strcmp(bpft.line, BPF_READY)) {
			if (!bpft.starts)
				printf("%s", said);
			if (bpft.starts < (int)(sizeof(bpft.attach_s) / sizeof(bpft.attach_s[0])))
				bpft.attach_s[bpft.starts++] = (double)(mono_ns() - t0) / 1e9;
			return;
		}
		n = strlen(said);
		snprintf(said + n, sizeof(said) - n, "#   bpftrace: %s\n", bpft.line);
	}
	printf("%s", said);
	CHECK(0, "bpftrace did not attach: it exited, or took over %d s (its output above)",
	      BPF_ATTACH_S);
	bpftrace_end(SIGKILL);
	bpft.usable = 0;
}

/* Whether mode m can be measured here: all can, but bpftrace where it is not staged or broke. */
static int wmode_usable(enum wmode m)
{
	return m != W_BPFTRACE || bpft.usable;
}

static void wmode_enter(enum wmode m)
{
	char us[16];

	switch (m) {
	case W_NOMODULE:
		umount(CSF_MOUNT_POINT);
		/* The last objects of earlier rounds go an RCU grace period after their threads. */
		for (int i = 0; system("rmmod coarse_stat_fs 2>/dev/null"); i++)
			if (i == 50)
				t_die("rmmod coarse_stat_fs");
			else
				t_sleep_ns(20 * MS);
		break;
	case W_ON:
		snprintf(us, sizeof(us), "%d", WATCH_US);
		write_str(WARN, us);
		break;
	case W_FTRACE:
		write_str(TRACING "/events/sched/sched_switch/enable", "1");
		write_str(TRACING "/tracing_on", "1");
		break;
	case W_BPFTRACE:
		bpftrace_start();
		break;
	default:
		break;
	}
}

static void wmode_leave(enum wmode m)
{
	switch (m) {
	case W_NOMODULE:
		if (system("insmod /csf/coarse_stat_fs.ko") ||
		    mount("none", CSF_MOUNT_POINT, CSF_FS_TYPE, 0, NULL))
			t_die("reload coarse_stat_fs");
		break;
	case W_ON:
		write_str(WARN, "0");
		break;
	case W_FTRACE:
		write_str(TRACING "/events/sched/sched_switch/enable", "0");
		write_str(TRACING "/trace", ""); /* empty the ring buffer */
		break;
	case W_BPFTRACE:
		if (bpft.usable) /* it attached */
			bpftrace_stop();
		break;
	default:
		break;
	}
}

static void bench_slice_watch(void)
{
	enum { RUNS = 11, ITERS = 5000 };
	static const struct {
		const char *name;
		int cpu_a, cpu_b;
	} where[] = { { "one CPU", 0, 0 }, { "two CPUs", 0, 1 } };
	double r[2][NR_WMODES][RUNS], med[2][NR_WMODES], noise[2];

	mount("nodev", TRACING, "tracefs", 0, NULL);
	write_str(TRACING "/tracing_on", "0");
	bpftrace_prog();
	bpft.usable = access(BPFTRACE, X_OK) == 0;
	printf("\n4. The long-slice watch: a byte back and forth through two pipes between two\n"
	       "unregistered threads, %d round trips, median of %d runs, the modes taking turns;\n"
	       "the tracers: the kernel's sched_switch event, as perf and trace-cmd record it, and\n"
	       "a bpftrace program doing the watch's bookkeeping (started and attached before each\n"
	       "of its runs, stopped after):\n\n%s\n",
	       ITERS, RUNS, bpf_prog);
	if (!bpft.usable)
		printf("SKIP bpftrace sched_switch: no %s in this guest (tests/debian/bpftrace-stage.sh "
		       "stages it in a run that names bench or bench-slices)\n\n",
		       BPFTRACE);
	/* A mode's runs on one CPU and on two follow each other, so bpftrace starts once a run. */
	for (int i = 0; i < RUNS; i++)
		for (int m = 0; m < NR_WMODES; m++) {
			if (!wmode_usable((enum wmode)m))
				continue;
			wmode_enter((enum wmode)m);
			if (wmode_usable((enum wmode)m))
				for (int w = 0; w < 2; w++)
					r[w][m][i] = round_trip(where[w].cpu_a, where[w].cpu_b,
								PLAIN, ITERS);
			wmode_leave((enum wmode)m);
		}
	printf("%-10s %-22s %18s %18s\n", "threads on", "mode", "ns per round trip",
	       "added ns / switch");
	for (int w = 0; w < 2; w++) {
		for (int m = 0; m < NR_WMODES; m++) {
			if (!wmode_usable((enum wmode)m))
				continue;
			qsort(r[w][m], RUNS, sizeof(r[w][m][0]), cmp_double);
			med[w][m] = r[w][m][RUNS / 2];
			printf("%-10s %-22s %18.0f %18.0f\n", where[w].name, wmode_name[m],
			       med[w][m], (med[w][m] - med[w][W_NOMODULE]) / 2);
		}
		noise[w] = (r[w][W_NOMODULE][RUNS * 3 / 4] - r[w][W_NOMODULE][RUNS / 4]) / 2;
	}
	if (bpft.usable) {
		qsort(bpft.attach_s, (size_t)bpft.starts, sizeof(bpft.attach_s[0]), cmp_double);
		printf("bpftrace: started %d times, attached %.1f s after its start (median); "
		       "slices over %d ms it printed: %d\n",
		       bpft.starts, bpft.attach_s[bpft.starts / 2], WATCH_US / 1000,
		       bpft.long_slices);
	}
	for (int w = 0; w < 2; w++) {
		double on = (med[w][W_ON] - med[w][W_NOMODULE]) / 2,
		       off = (med[w][W_OFF] - med[w][W_NOMODULE]) / 2,
		       tracer = (med[w][W_FTRACE] - med[w][W_NOMODULE]) / 2, n = noise[w] / 2;

		printf("target (%s): watch on below the tracer: %.0f vs %.0f ns per switch, %s; "
		       "watch off within noise of no module: %+.0f ns vs noise %.0f ns, %s\n",
		       where[w].name, on, tracer, on < tracer ? "met" : "NOT met", off, n,
		       fabs(off) <= n ? "met" : "NOT met");
		if (bpft.usable) {
			double bpf = (med[w][W_BPFTRACE] - med[w][W_NOMODULE]) / 2;
			char ratio[40] = "has no ratio (bpftrace adds nothing)";

			if (bpf > 0)
				snprintf(ratio, sizeof(ratio), "costs %.2fx bpftrace's", on / bpf);
			printf("target (%s): watch on below bpftrace: %.0f vs %.0f ns per switch, "
			       "the watch %s, %s, %s the noise (%+.0f ns vs %.0f ns)\n",
			       where[w].name, on, bpf, ratio, on < bpf ? "met" : "NOT met",
			       fabs(on - bpf) > n ? "beyond" : "within", on - bpf, n);
		}
	}
}

static uint64_t measure_tsc_hz(void)
{
	uint64_t c0 = csf_rdtsc(), t0 = mono_ns(), c1, t1;

	t_sleep_ns(200 * MS);
	c1 = csf_rdtsc();
	t1 = mono_ns();
	return (uint64_t)((double)(c1 - c0) * 1e9 / (double)(t1 - t0));
}

/*
 * bench's parts. Each mode (no argument, --slices, --reader, --fpu) is a program of its own, its
 * parts numbered from 1: main() runs the parts of the mode argv chooses, each through part(), as
 * t_main() runs a scenario. Registered with SCENARIO(), every run would list the other modes'
 * parts too, as skipped, and number its own after them.
 */
static void part(const char *name, void (*fn)(void))
{
	if (!t_begin(name))
		return;
	fn();
	t_end();
}

/* The page "bench --reader" reads: set up in main(), read by its part. */
static struct csf_thread_page fake __attribute__((aligned(4096)));

static void calls_of_reader(void)
{
	t_pin(0);
	bench_calls(&fake);
}

static void calls_of_module(void)
{
	t_pin(0);
	bench_calls(NULL);
}

int main(int argc, char **argv)
{
	static struct csf_snap s; /* hdr points into it */

	if (argc == 2 && !strcmp(argv[1], "--slices")) {
		printf("coarse_stat_fs long-slice watch benchmark, %ld CPUs\n",
		       sysconf(_SC_NPROCESSORS_ONLN));
		part("the long-slice watch per context switch", bench_slice_watch);
		return t_done("bench --slices");
	}

	if (argc == 2 && !strcmp(argv[1], "--reader")) {
		/* A page as the kernel sets one up, on the CPU, accounting since a moment ago. */
		fake.hdr.magic = CSF_MAGIC;
		fake.hdr.abi_version = CSF_ABI_VERSION;
		fake.hdr.kind = CSF_KIND_THREAD;
		fake.hdr.size = sizeof(fake);
		fake.hdr.tsc_hz = measure_tsc_hz();
		fake.hdr.counter = COUNTER_ID;
		fake.state = CSF_ONCPU;
		fake.start_tsc = fake.last_switch_tsc = csf_rdtsc();
		hdr = &fake.hdr;
		printf("coarse_stat_fs reader benchmark, no module: " COUNTER
		       " %.1f MHz (measured), %ld CPUs\n",
		       (double)hdr->tsc_hz / 1e6, sysconf(_SC_NPROCESSORS_ONLN));
		part("cost per call, the reader on an ordinary page", calls_of_reader);
		return t_done("bench --reader");
	}

	t_snap(&s);
	hdr = &s.p.hdr;
	if (argc == 2 && !strcmp(argv[1], "--fpu")) {
		part("FPU save and restore", bench_fpu);
		return t_done("bench --fpu");
	}
	printf("coarse_stat_fs benchmark: " COUNTER " %.1f MHz%s, %ld CPUs\n",
	       (double)hdr->tsc_hz / 1e6,
	       hdr->flags & CSF_HDR_TSC_INVARIANT ? "" : " (not invariant)",
	       sysconf(_SC_NPROCESSORS_ONLN));

	part("cost per call", calls_of_module);
	part("context switches", bench_switches);
	part("memory", bench_memory);
	return t_done("bench");
}
