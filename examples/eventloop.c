// SPDX-License-Identifier: MIT
/*
 * eventloop: profile a loop of operations and report only the slow ones, with where their wall
 * time went. Copy from it freely.
 *
 * The loop mixes fast operations (a little computation) with slow ones of each kind:
 *
 *   sleep   a 25 ms timer sleep
 *   spin    30 ms of computation
 *   io      two O_DIRECT reads of a block device (by default /dev/nullb0, for example
 *           null_blk loaded with irqmode=2 completion_nsec=10000000)
 *   lock    waiting for a mutex that another thread holds for 20 ms
 *   crowd   10 ms of computation on a CPU that another thread wants too
 *
 * Each operation is timed with csf_rdtsc() around a csf_thread_snap() taken before it; only
 * when it took longer than the threshold is a second snapshot taken and the difference
 * printed: once field by field, and once as csf_format_diff() writes it.
 *
 * Usage: eventloop [-n ITERATIONS] [-t THRESHOLD_MS] [-d DEVICE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/coarse_stat_fs.h"

enum op { OP_COMPUTE, OP_SLEEP, OP_SPIN, OP_IO, OP_LOCK, OP_CROWD, NR_OPS };

static const char *const op_name[NR_OPS] = { "compute", "sleep", "spin", "io", "lock", "crowd" };

/* The five buckets, in words, for "mostly ...". */
static const char *const bucket_words[CSF_NR_STATES] = {
	"on a CPU (computing)",
	"waiting for a CPU (runqueue)",
	"sleeping (poll, futex, timer, ...)",
	"in uninterruptible sleep (D state)",
	"waiting for block I/O (iowait)",
};

/* Which operation runs at iteration i: one slow operation of each kind every 40. */
static enum op schedule(int i)
{
	switch (i % 40) {
	case 7:
		return OP_SLEEP;
	case 15:
		return OP_SPIN;
	case 23:
		return OP_IO;
	case 31:
		return OP_LOCK;
	case 37:
		return OP_CROWD;
	default:
		return OP_COMPUTE;
	}
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Compute until this thread has had ns of CPU time. */
static void compute(uint64_t ns)
{
	uint64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;

	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

/* ---- The helper thread: holds the lock, or crowds the CPU, when asked ---- */

enum helper_req { IDLE, HOLD, HELD, CROWD, STOP };

static struct {
	pthread_mutex_t mu; /* protects the fields below */
	pthread_cond_t cv;
	enum helper_req req;
	pthread_mutex_t lock; /* what OP_LOCK waits for */
} helper = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, IDLE, PTHREAD_MUTEX_INITIALIZER };

static void helper_set(enum helper_req req)
{
	pthread_mutex_lock(&helper.mu);
	helper.req = req;
	pthread_cond_broadcast(&helper.cv);
	pthread_mutex_unlock(&helper.mu);
}

static void helper_wait(enum helper_req req)
{
	pthread_mutex_lock(&helper.mu);
	while (helper.req != req)
		pthread_cond_wait(&helper.cv, &helper.mu);
	pthread_mutex_unlock(&helper.mu);
}

static void *helper_main(void *arg)
{
	struct timespec hold = { 0, 20000000 };
	int cpu = (int)(long)arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* the main loop's CPU */
	for (;;) {
		pthread_mutex_lock(&helper.mu);
		while (helper.req == IDLE || helper.req == HELD)
			pthread_cond_wait(&helper.cv, &helper.mu);
		enum helper_req req = helper.req;
		pthread_mutex_unlock(&helper.mu);

		if (req == STOP)
			return NULL;
		if (req == HOLD) {
			pthread_mutex_lock(&helper.lock);
			helper_set(HELD);
			nanosleep(&hold, NULL);
			pthread_mutex_unlock(&helper.lock);
		} else { /* CROWD: spin until the main loop is done */
			while (__atomic_load_n(&helper.req, __ATOMIC_RELAXED) == CROWD)
				;
		}
	}
}

/* ---- Operations ---- */

static const char *device = "/dev/nullb0";
static int dev_fd = -1;
static void *dev_buf;

/* What must happen before an operation is timed (the lock held, say). */
static void prepare(enum op op)
{
	if (op == OP_LOCK) {
		helper_set(HOLD);
		helper_wait(HELD);
	} else if (op == OP_CROWD) {
		helper_set(CROWD);
	}
}

static void run(enum op op)
{
	struct timespec ts = { 0, 25000000 };

	switch (op) {
	case OP_COMPUTE:
		compute(50000);
		break;
	case OP_SLEEP:
		nanosleep(&ts, NULL);
		break;
	case OP_SPIN:
		compute(30000000);
		break;
	case OP_IO:
		for (int i = 0; i < 2; i++)
			if (pread(dev_fd, dev_buf, 4096, (off_t)i * 4096) != 4096)
				perror("eventloop: pread");
		break;
	case OP_LOCK:
		pthread_mutex_lock(&helper.lock);
		pthread_mutex_unlock(&helper.lock);
		break;
	case OP_CROWD:
		compute(10000000);
		helper_set(IDLE);
		break;
	default:
		break;
	}
}

/* ---- Reporting ---- */

static double ms(const struct csf_hdr *h, uint64_t cyc)
{
	return (double)csf_cyc_to_ns(h, cyc) / 1e6;
}

/* Print where an operation's time went: the fields one at a time, then the one-line form. */
static void report(enum op op, const struct csf_snap *a, const struct csf_snap *b)
{
	const struct csf_hdr *h = &b->p.hdr;
	char line[CSF_DIFF_BUFSZ];
	int top = 0;

	for (int i = 1; i < CSF_NR_STATES; i++)
		if (b->p.cyc[i] - a->p.cyc[i] > b->p.cyc[top] - a->p.cyc[top])
			top = i;

	printf("slow op %s\n", op_name[op]);
	printf("  wall %.1f ms, mostly %s\n", ms(h, b->tsc - a->tsc), bucket_words[top]);
	printf("  time cpu %.1f + runq %.1f + sleep %.1f + dsleep %.1f + iowait %.1f ms\n",
	       ms(h, b->p.oncpu_cyc - a->p.oncpu_cyc), ms(h, b->p.runq_cyc - a->p.runq_cyc),
	       ms(h, b->p.sleep_cyc - a->p.sleep_cyc), ms(h, b->p.dsleep_cyc - a->p.dsleep_cyc),
	       ms(h, b->p.iowait_cyc - a->p.iowait_cyc));
	printf("  switches %llu preempted, %llu blocked, %llu migrated; tid %u now on cpu %u\n",
	       (unsigned long long)(b->p.nr_preempt - a->p.nr_preempt),
	       (unsigned long long)(b->p.nr_block - a->p.nr_block),
	       (unsigned long long)(b->p.nr_migrate - a->p.nr_migrate), b->p.tid, b->p.cpu);
	printf("  faults %llu minor, %llu major\n",
	       (unsigned long long)(b->p.min_flt - a->p.min_flt),
	       (unsigned long long)(b->p.maj_flt - a->p.maj_flt));
	printf("  io %llu reads, %llu writes; %llu B read, %llu B written; storage %llu B read, "
	       "%llu B written\n",
	       (unsigned long long)(b->p.syscr - a->p.syscr),
	       (unsigned long long)(b->p.syscw - a->p.syscw),
	       (unsigned long long)(b->p.rchar - a->p.rchar),
	       (unsigned long long)(b->p.wchar - a->p.wchar),
	       (unsigned long long)(b->p.read_bytes - a->p.read_bytes),
	       (unsigned long long)(b->p.write_bytes - a->p.write_bytes));
	if (csf_format_diff(line, sizeof(line), a, b) >= 0)
		printf("  %s\n", line);
}

int main(int argc, char **argv)
{
	int iterations = 200, slow_count[NR_OPS] = { 0 }, nslow = 0, c;
	double threshold_ms = 5;
	struct csf_snap before, after;
	pthread_t th;

	while ((c = getopt(argc, argv, "n:t:d:h")) != -1) {
		char *end;

		switch (c) {
		case 'n':
			iterations = (int)strtol(optarg, &end, 10);
			if (*end || iterations <= 0) {
				fprintf(stderr, "eventloop: -n wants a positive count\n");
				return 2;
			}
			break;
		case 't':
			threshold_ms = strtod(optarg, &end);
			if (*end || !(threshold_ms > 0)) {
				fprintf(stderr, "eventloop: -t wants a positive number of ms\n");
				return 2;
			}
			break;
		case 'd':
			device = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-n ITERATIONS] [-t THRESHOLD_MS] [-d DEVICE]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}

	if (csf_thread_snap(&before)) {
		fprintf(stderr, "eventloop: csf_thread_snap: %s%s\n", strerror(errno),
			errno == ENOENT ? " (is coarse_stat_fs loaded and mounted?)" : "");
		return 1;
	}
	dev_fd = open(device, O_RDONLY | O_DIRECT);
	if (dev_fd < 0 || posix_memalign(&dev_buf, 4096, 4096)) {
		fprintf(stderr, "eventloop: %s: %s; the io operation is left out (-d DEVICE)\n",
			device, strerror(errno));
		dev_fd = -1;
	}
	/* Stay on one CPU, and put the helper there too, so that "crowd" has to share it. */
	int cpu = sched_getcpu();
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	pthread_create(&th, NULL, helper_main, (void *)(long)cpu);

	/* The threshold in TSC cycles, so that the loop compares cycles, not ns. */
	uint64_t threshold = (uint64_t)(threshold_ms * 1e-3 * (double)before.p.hdr.tsc_hz);

	for (int i = 0; i < iterations; i++) {
		enum op op = schedule(i);

		if (op == OP_IO && dev_fd < 0)
			op = OP_COMPUTE;
		prepare(op);
		if (csf_thread_snap(&before))
			break; /* cannot fail once the page is mapped; checked all the same */
		uint64_t t0 = csf_rdtsc();
		run(op);
		if (csf_rdtsc() - t0 > threshold && !csf_thread_snap(&after)) {
			report(op, &before, &after);
			slow_count[op]++;
			nslow++;
		}
	}
	helper_set(STOP);
	pthread_join(th, NULL);

	printf("%d ops, %d slow (over %.1f ms):", iterations, nslow, threshold_ms);
	for (int op = 0; op < NR_OPS; op++)
		printf(" %d %s%s", slow_count[op], op_name[op], op == NR_OPS - 1 ? "\n" : ",");
	return 0;
}
