// SPDX-License-Identifier: GPL-2.0
/*
 * t_hotplug: CPU hotplug in a loop while the cpu page is read and registered threads migrate.
 * One thread takes cpu1 offline and online again and again; two readers copy the whole cpu
 * page and check that its sum row is the sum of its rows, that cpu0 stays online and that the
 * refresh time never goes back; two children move their registered threads between the CPUs
 * and check the sum rule of their snapshots. Every few cycles one child is killed with SIGKILL
 * in the middle and another takes its place. Nothing may leak.
 *
 *	t_hotplug [SECONDS]	(default 10)
 */
#include "../tk.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define CPU1_ONLINE "/sys/devices/system/cpu/cpu1/online"
#define MOVERS 2

struct shared {
	atomic_long snaps, migrations, bad;
};

static struct shared *sh;
static atomic_int stop;
static atomic_long reads, bad_reads, cycles;

static void *reader(void *arg)
{
	struct csf_cpu_row rows[65];
	uint64_t t, last_t = 0;
	int n;

	(void)arg;
	while (!atomic_load(&stop)) {
		n = csf_cpu_snap_all(rows, 65, &t);
		if (n < 2) {
			atomic_fetch_add(&bad_reads, 1);
			continue;
		}
		if (!tk_cpu_sum_ok(rows, n) || rows[1].online != 1 || t < last_t) {
			printf("#   bad read: sum row or cpu0 row or time (%llu after %llu)\n",
			       (unsigned long long)t, (unsigned long long)last_t);
			atomic_fetch_add(&bad_reads, 1);
		}
		last_t = t;
		atomic_fetch_add(&reads, 1);
	}
	return NULL;
}

/* A child whose threads hop between the CPUs (cpu1 when it is there) and take snapshots. */
static void *mover(void *arg)
{
	uint64_t rng = (uint64_t)(long)arg, last_migrate = 0;
	struct csf_snap a, b;
	bool counted = false;

	for (;;) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET((int)tk_below(&rng, 2), &set);
		sched_setaffinity(0, sizeof(set), &set); /* fails while cpu1 is away */
		if (csf_thread_snap(&a)) {
			atomic_fetch_add(&sh->bad, 1);
			continue;
		}
		t_spin_ns(200000);
		if (csf_thread_snap(&b)) {
			atomic_fetch_add(&sh->bad, 1);
			continue;
		}
		uint64_t sum = 0;

		for (int i = 0; i < CSF_NR_STATES; i++)
			sum += b.p.cyc[i] - a.p.cyc[i];
		if (sum != b.tsc - a.tsc)
			atomic_fetch_add(&sh->bad, 1);
		atomic_fetch_add(&sh->snaps, 2);
		/*
		 * From one round's end to the next, so that the affinity change's own migration
		 * counts: one inside the 200 us spin needs cpu1 to leave just then.
		 */
		if (counted)
			atomic_fetch_add(&sh->migrations, (long)(b.p.nr_migrate - last_migrate));
		last_migrate = b.p.nr_migrate;
		counted = true;
	}
	return NULL;
}

static pid_t start_mover(int seed)
{
	pid_t pid = fork();

	if (pid == 0) {
		pthread_t th[2];

		for (long i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, mover, (void *)((long)seed * 2 + i + 1));
		pthread_join(th[0], NULL);
		_exit(0);
	}
	return pid;
}

static double seconds; /* how long to go on: from the command line */

SCENARIO(hotplug_loop, "hotplug in a loop while the cpu page is read and threads migrate")
{
	uint64_t rng = 0x407, end;
	pid_t movers[MOVERS];
	pthread_t rd[2];
	long kills = 0;
	int base;

	if (access(CPU1_ONLINE, W_OK))
		SKIP("cpu1 cannot go offline here");
	t_sleep_ns(20000000);
	base = t_module_refs();
	for (int i = 0; i < MOVERS; i++)
		movers[i] = start_mover(i);
	for (int i = 0; i < 2; i++)
		pthread_create(&rd[i], NULL, reader, NULL);
	end = mono_ns() + (uint64_t)(seconds * 1e9);
	while (mono_ns() < end) {
		CHECK(file_write(CPU1_ONLINE, "0") == 0, "offline: %s", strerror(errno));
		t_sleep_ns(tk_below(&rng, 20000000));
		CHECK(file_write(CPU1_ONLINE, "1") == 0, "online: %s", strerror(errno));
		t_sleep_ns(tk_below(&rng, 20000000));
		if (atomic_fetch_add(&cycles, 1) % 4 == 3) {
			int i = (int)tk_below(&rng, MOVERS);

			kill(movers[i], SIGKILL);
			waitpid(movers[i], NULL, 0);
			movers[i] = start_mover((int)kills + MOVERS);
			kills++;
		}
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(rd[i], NULL);
	for (int i = 0; i < MOVERS; i++) {
		kill(movers[i], SIGKILL);
		waitpid(movers[i], NULL, 0);
	}
	file_write(CPU1_ONLINE, "1");
	csf_cpu_unmap();
	printf("FIGURE hotplug cycles %ld cpu-page-reads %ld snapshots %ld migrations %ld "
	       "movers-killed %ld\n",
	       atomic_load(&cycles), atomic_load(&reads), atomic_load(&sh->snaps),
	       atomic_load(&sh->migrations), kills);
	CHECK_EQ(atomic_load(&bad_reads), 0);
	CHECK_EQ(atomic_load(&sh->bad), 0);
	CHECK(atomic_load(&sh->migrations) > 0, "no thread migrated");
	CHECK_EQ(t_module_refs_settle(base), base);
}

int main(int argc, char **argv)
{
	seconds = argc > 1 ? atof(argv[1]) : 10;
	/* Shared with the children: the whole program's, made once. */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		t_die("mmap");
	return t_main("t_hotplug");
}
