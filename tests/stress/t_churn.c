// SPDX-License-Identifier: GPL-2.0
/*
 * t_churn: thousands of threads register and exit (10,000 by default; the harness asks for
 * 2,000 on release kernels and 10,000 on the debug kernel). Four processes each keep 8 threads
 * alive: every thread opens thread-self (that registers it) and exits with the descriptor
 * still open, so that its object is unregistered by the exit and freed by the close that
 * its creator makes afterwards; one thread in 8 also maps its page through the library and
 * checks it (its own tid, the sum rule). Meanwhile the parent kills one process with SIGKILL
 * at a random moment, over and over, while its threads are registering, and starts another in
 * its place. At the end, with every process gone, the module's reference count must be back
 * where it was: every object freed, whether its thread exited or was killed.
 *
 *	t_churn [THREADS]	(default 10000)
 */
#include "../tk.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PROCS 4
#define ALIVE 8

struct shared {
	atomic_long threads; /* registered and checked */
	atomic_long bad;
	atomic_int stop;
};

static struct shared *sh;

/* Register (the open), maybe check through the library, exit registered. Returns the fd. */
static void *one_thread(void *arg)
{
	long check = (long)arg;
	int fd = open(CSF_MOUNT_POINT "/" CSF_THREAD_FILE, O_RDONLY | O_CLOEXEC);
	struct csf_snap s;
	uint64_t sum = 0;

	if (fd < 0) {
		atomic_fetch_add(&sh->bad, 1);
		return (void *)-1L;
	}
	if (check) {
		if (csf_thread_snap(&s)) {
			atomic_fetch_add(&sh->bad, 1);
			return (void *)(long)fd;
		}
		for (int i = 0; i < CSF_NR_STATES; i++)
			sum += s.p.cyc[i];
		if (sum != s.tsc - s.p.start_tsc || s.p.tid != (uint32_t)gettid())
			atomic_fetch_add(&sh->bad, 1);
	}
	atomic_fetch_add(&sh->threads, 1);
	return (void *)(long)fd;
}

/* Keep ALIVE threads coming and going until told to stop; close what each left open. */
static void churn(void)
{
	pthread_t th[ALIVE];

	for (;;) {
		for (long i = 0; i < ALIVE; i++)
			if (pthread_create(&th[i], NULL, one_thread, (void *)(long)(i == 0)))
				_exit(2);
		for (int i = 0; i < ALIVE; i++) {
			void *fd;

			pthread_join(th[i], &fd);
			if ((long)fd >= 0)
				close((int)(long)fd); /* the owner is gone: this frees the object */
		}
		if (atomic_load(&sh->stop))
			_exit(0);
	}
}

static pid_t start(void)
{
	pid_t pid = fork();

	if (pid < 0)
		t_die("fork");
	if (pid == 0)
		churn();
	return pid;
}

static long want; /* threads to register: from the command line */

SCENARIO(churn_kill, "threads register and exit while processes are killed; nothing leaks")
{
	uint64_t rng = 0xc4a2, t0, next_report = 2000;
	pid_t pids[PROCS];
	long kills = 0;
	int base, status;
	double secs;

	t_sleep_ns(20000000);
	base = t_module_refs();
	t0 = mono_ns();
	for (int i = 0; i < PROCS; i++)
		pids[i] = start();
	while (atomic_load(&sh->threads) < want) {
		/* A kill somewhere in 0-100 ms, mid-registration more often than not. */
		t_sleep_ns(tk_below(&rng, 100000000));
		if (atomic_load(&sh->threads) >= want)
			break;
		if ((uint64_t)atomic_load(&sh->threads) >= next_report) {
			printf("#   %ld threads, %.0f s\n", atomic_load(&sh->threads),
			       (double)(mono_ns() - t0) / 1e9);
			fflush(stdout);
			next_report += 2000;
		}
		int i = (int)tk_below(&rng, PROCS);

		kill(pids[i], SIGKILL);
		waitpid(pids[i], &status, 0);
		kills++;
		pids[i] = start();
	}
	atomic_store(&sh->stop, 1);
	for (int i = 0; i < PROCS; i++) {
		waitpid(pids[i], &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d: status %#x", i,
		      status);
	}
	secs = (double)(mono_ns() - t0) / 1e9;
	printf("FIGURE churn threads %ld seconds %.1f threads-per-second %.0f processes-killed %ld\n",
	       atomic_load(&sh->threads), secs, (double)atomic_load(&sh->threads) / secs, kills);
	CHECK(atomic_load(&sh->threads) >= want, "only %ld threads", atomic_load(&sh->threads));
	CHECK_EQ(atomic_load(&sh->bad), 0);
	CHECK_EQ(t_module_refs_settle(base), base);
}

int main(int argc, char **argv)
{
	want = argc > 1 ? atol(argv[1]) : 10000;
	/* Shared with the children: the whole program's, made once. */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		t_die("mmap");
	return t_main("t_churn");
}
