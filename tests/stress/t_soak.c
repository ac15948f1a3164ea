// SPDX-License-Identifier: GPL-2.0
/*
 * t_soak: a mixed load for a while, checking the sum rule on every snapshot it takes.
 *
 *   - the example's operations (examples/eventloop.c): sleeping, spinning, reading a slow disk
 *     (/dev/nullb0, when there), waiting for a lock another thread holds, and computing on a CPU
 *     another thread wants, each between two snapshots whose difference must add up;
 *   - churn: threads that register, check a snapshot and exit, and children that do the same;
 *   - the cpu page read without pause: its sum row must be the sum of its rows;
 *   - the fuzzer (t_fuzz), in a child process, for the whole time.
 *
 * Every snapshot: the buckets add up to tsc - start_tsc (and, between two, to the wall time).
 * At the end, with everything stopped, the module's references are back where they were and
 * the kernel has logged no report.
 *
 *	t_soak [SECONDS]	(default 30)
 *
 * Prints "FIGURE soak seconds N snapshots N sum-rule-violations N kernel-reports N".
 */
#include "../tk.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define MS 1000000ull

static atomic_int stop;
static atomic_long snaps, violations;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int disk = -1;

static uint64_t bucket_sum(const struct csf_snap *s)
{
	uint64_t sum = 0;

	for (int i = 0; i < CSF_NR_STATES; i++)
		sum += s->p.cyc[i];
	return sum;
}

/* A snapshot of the calling thread, checked; false when the library failed. */
static bool snap(struct csf_snap *s)
{
	if (csf_thread_snap(s)) {
		printf("#   csf_thread_snap: %s\n", strerror(errno));
		atomic_fetch_add(&violations, 1);
		return false;
	}
	atomic_fetch_add(&snaps, 1);
	if (bucket_sum(s) != s->tsc - s->p.start_tsc) {
		printf("#   sum rule: buckets %llu, tsc - start_tsc %llu\n",
		       (unsigned long long)bucket_sum(s),
		       (unsigned long long)(s->tsc - s->p.start_tsc));
		atomic_fetch_add(&violations, 1);
		return false;
	}
	return true;
}

static void *lock_holder(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_mutex_lock(&lock);
		t_sleep_ns(3 * MS);
		pthread_mutex_unlock(&lock);
		t_sleep_ns(1 * MS);
	}
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	t_pin(0);
	while (!atomic_load(&stop))
		t_spin_ns(5 * MS);
	return NULL;
}

/* The example's operations, each between two checked snapshots. */
static void *example_ops(void *arg)
{
	uint64_t rng = (uint64_t)(long)arg;
	static char buf[4096] __attribute__((aligned(4096)));
	struct csf_snap a, b;
	cpu_set_t all;

	sched_getaffinity(0, sizeof(all), &all);
	while (!atomic_load(&stop)) {
		uint64_t op = tk_below(&rng, 5);

		if (!snap(&a))
			continue;
		switch (op) {
		case 0:
			t_sleep_ns(2 * MS);
			break;
		case 1:
			t_spin_ns(2 * MS);
			break;
		case 2:
			if (disk >= 0 && pread(disk, buf, sizeof(buf), 0) < 0)
				t_die("read /dev/nullb0");
			break;
		case 3:
			pthread_mutex_lock(&lock);
			pthread_mutex_unlock(&lock);
			break;
		default: /* the spinner's CPU */
			t_pin(0);
			t_spin_ns(2 * MS);
			sched_setaffinity(0, sizeof(all), &all);
		}
		if (!snap(&b))
			continue;
		if (bucket_sum(&b) - bucket_sum(&a) != b.tsc - a.tsc) {
			printf("#   sum rule between two snapshots broken\n");
			atomic_fetch_add(&violations, 1);
		}
	}
	return NULL;
}

static void *short_lived(void *arg)
{
	struct csf_snap s;

	(void)arg;
	snap(&s);
	return NULL;
}

static void *churn(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		pthread_t th;
		pid_t pid;

		if (pthread_create(&th, NULL, short_lived, NULL) == 0)
			pthread_join(th, NULL);
		pid = fork();
		if (pid == 0) {
			struct csf_snap s;

			_exit(csf_thread_snap(&s) == 0 && bucket_sum(&s) == s.tsc - s.p.start_tsc ?
				      0 :
				      1);
		}
		if (pid > 0) {
			int status;

			waitpid(pid, &status, 0);
			atomic_fetch_add(&snaps, 1);
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				atomic_fetch_add(&violations, 1);
		}
	}
	return NULL;
}

static void *cpu_reader(void *arg)
{
	struct csf_cpu_row rows[65];

	(void)arg;
	while (!atomic_load(&stop)) {
		int n = csf_cpu_snap_all(rows, 65, NULL);

		if (n < 2) {
			atomic_fetch_add(&violations, 1);
			continue;
		}
		atomic_fetch_add(&snaps, 1);
		if (!tk_cpu_sum_ok(rows, n)) {
			printf("#   cpu page: the sum row is not the sum of the rows\n");
			atomic_fetch_add(&violations, 1);
		}
		t_sleep_ns(MS);
	}
	return NULL;
}

static double seconds; /* how long to soak: from the command line */

SCENARIO(soak, "soak: every snapshot keeps the sum rule; no leak, no kernel report")
{
	uint64_t seed = (uint64_t)time(NULL), t0;
	int nth = 0, base, reports, status = 0;
	char secs[32], seedstr[32];
	struct tk_kmsg kmsg;
	double took;
	pthread_t th[7];
	pid_t fuzz;

	tk_kmsg_open(&kmsg);
	t_sleep_ns(20000000);
	base = t_module_refs();
	disk = open("/dev/nullb0", O_RDONLY | O_DIRECT | O_CLOEXEC);
	snprintf(secs, sizeof(secs), "%.0f", seconds);
	snprintf(seedstr, sizeof(seedstr), "%llu", (unsigned long long)seed);
	t0 = mono_ns();
	fuzz = fork();
	if (fuzz == 0) {
		/* -L: the soak's own threads move the reference count; it checks at the end */
		execlp("t_fuzz", "t_fuzz", "-d", secs, "-s", seedstr, "-L", (char *)NULL);
		_exit(127);
	}
	pthread_create(&th[nth++], NULL, lock_holder, NULL);
	pthread_create(&th[nth++], NULL, spinner, NULL);
	pthread_create(&th[nth++], NULL, example_ops, (void *)1L);
	pthread_create(&th[nth++], NULL, example_ops, (void *)2L);
	pthread_create(&th[nth++], NULL, churn, NULL);
	pthread_create(&th[nth++], NULL, cpu_reader, NULL);
	waitpid(fuzz, &status, 0);
	while (mono_ns() - t0 < (uint64_t)(seconds * 1e9))
		t_sleep_ns(100 * MS);
	atomic_store(&stop, 1);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	csf_cpu_unmap();
	took = (double)(mono_ns() - t0) / 1e9;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the fuzzer failed (status %#x)",
	      status);
	CHECK_EQ(t_module_refs_settle(base), base);
	reports = tk_kmsg_reports(&kmsg);
	printf("FIGURE soak seconds %.0f snapshots %ld sum-rule-violations %ld kernel-reports %d\n",
	       took, atomic_load(&snaps), atomic_load(&violations), reports);
	CHECK_EQ(atomic_load(&violations), 0);
	CHECK_EQ(reports, 0);
}

int main(int argc, char **argv)
{
	seconds = argc > 1 ? atof(argv[1]) : 30;
	return t_main("t_soak");
}
