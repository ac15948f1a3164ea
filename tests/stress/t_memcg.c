// SPDX-License-Identifier: GPL-2.0
/*
 * t_memcg: opens in a memory cgroup with a tiny memory.max. A thread's object and page are
 * charged to the opener's cgroup (GFP_KERNEL_ACCOUNT), so once the cgroup is full, opens must
 * fail with ENOMEM (the library's call returns -1 with it), not crash, hang or leak. A child
 * moves itself into a new cgroup, makes itself unkillable by the OOM killer (so that the charge
 * fails instead of killing it), starts 48 threads, and only then is memory.max set just above
 * what it uses; each thread then maps its page. In the second round the child is killed with
 * SIGKILL while its threads are opening. Afterwards, the module's reference count is back
 * where it was and the cgroup's charges are gone.
 *
 * The kernel's OOM report (the charge that failed) is expected: tests/harness/vm-inner.sh brackets
 * this test with the harness's noise markers.
 */
#include "../tk.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define CG "/sys/fs/cgroup"
#define TINY CG "/csf-tiny"
#define THREADS 48

struct shared {
	atomic_int ready, go, tried;
	atomic_int ok, enomem, other, gave_up;
};

/* Shared with the child, mapped once for the whole program. */
static struct shared *sh;

/*
 * Fault in what the thread will touch in user space before the cgroup fills up: a page fault
 * that cannot be charged, with nothing to kill, is retried forever rather than failed.
 */
static void __attribute__((noinline)) warm_up(void)
{
	/* Volatile stores, and a volatile pointer: a memset or malloc/free pair is optimized out.
 */
	volatile char stack[32768];
	void *volatile p = malloc(512); /* the thread's malloc arena: thread_local destructors */

	for (size_t i = 0; i < sizeof(stack); i += 256)
		stack[i] = 1;
	free(p);
}

static void *opener(void *arg)
{
	struct csf_snap s;

	(void)arg;
	warm_up();
	atomic_fetch_add(&sh->ready, 1);
	while (!atomic_load(&sh->go))
		t_sleep_ns(1000000);
	if (csf_thread_snap(&s) == 0)
		atomic_fetch_add(&sh->ok, 1);
	else if (errno == ENOMEM)
		atomic_fetch_add(&sh->enomem, 1);
	else
		atomic_fetch_add(&sh->other, 1);
	/*
	 * Stay until every thread has tried: an exiting thread frees more than an open charges
	 * (its kernel stack, and the stack pages glibc gives back), and would make room for the
	 * next one, so that all might get through one after the other.
	 */
	atomic_fetch_add(&sh->tried, 1);
	for (int i = 0; atomic_load(&sh->tried) < THREADS; i++) {
		/* Not forever: a thread can still be stuck in a fault only an exit lets through. */
		if (i == 10000) {
			atomic_fetch_add(&sh->gave_up, 1);
			break;
		}
		t_sleep_ns(1000000);
	}
	return NULL;
}

static void child(void)
{
	pthread_t th[THREADS];
	struct csf_snap s;
	char pid[32];

	/* The library's once-per-process setup, while memory is plentiful. */
	if (csf_thread_snap(&s))
		_exit(12);
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (file_write(TINY "/cgroup.procs", pid) ||
	    file_write("/proc/self/oom_score_adj", "-1000"))
		_exit(10);
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, opener, NULL))
			_exit(11);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	_exit(0);
}

/*
 * What the child really uses. Charges come out of per-CPU stocks charged ahead by up to 64
 * pages: a limit of 0 drains them (and fails to reclaim or kill anything), but another CPU's
 * stock drains later, in a work item the write does not wait for. Counted in, that stock let
 * every open through. So: drain and read until two reads agree.
 */
static long long settled_usage(void)
{
	long long cur = -1, prev;

	for (int i = 0; i < 50; i++) {
		prev = cur;
		file_write(TINY "/memory.max", "0");
		t_sleep_ns(20000000);
		cur = file_read_ll(TINY "/memory.current");
		if (cur == prev)
			break;
	}
	return cur;
}

/* One round; kill: SIGKILL the child while its threads open. */
static void round_(bool kill_it, int base)
{
	long long cur;
	char max[32];
	int status;
	pid_t pid;

	memset(sh, 0, sizeof(*sh));
	CHECK(mkdir(TINY, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", TINY, strerror(errno));
	pid = fork();
	if (pid == 0)
		child();
	while (atomic_load(&sh->ready) < THREADS)
		t_sleep_ns(2000000);
	t_sleep_ns(50000000); /* every thread is parked in its wait */
	cur = settled_usage();
	/* Room for about three objects and their pages beyond what the child already uses. */
	snprintf(max, sizeof(max), "%lld", cur + 3LL * 8192);
	CHECK(file_write(TINY "/memory.max", max) == 0, "memory.max: %s", strerror(errno));
	atomic_store(&sh->go, 1);
	if (kill_it) {
		t_sleep_ns(3000000);
		kill(pid, SIGKILL);
	}
	waitpid(pid, &status, 0);
	file_write(TINY "/memory.max", "max");
	printf("#   %s: memory.current %lld, memory.max %s: %d mapped, %d ENOMEM, %d other errors"
	       "; %d stopped waiting for the others\n",
	       kill_it ? "killed" : "to the end", cur, max, atomic_load(&sh->ok),
	       atomic_load(&sh->enomem), atomic_load(&sh->other), atomic_load(&sh->gave_up));
	printf("FIGURE memcg %s threads %d mapped %d enomem %d other-errors %d\n",
	       kill_it ? "killed" : "complete", THREADS, atomic_load(&sh->ok),
	       atomic_load(&sh->enomem), atomic_load(&sh->other));
	if (kill_it) {
		CHECK(WIFSIGNALED(status) || WIFEXITED(status), "status %#x", status);
	} else {
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
		CHECK(atomic_load(&sh->enomem) > 0, "no open failed in a full cgroup");
	}
	CHECK_EQ(atomic_load(&sh->other), 0);
	CHECK_EQ(t_module_refs_settle(base), base);
	/* The objects' charges go with them: the pages freed an RCU grace period after exit. */
	for (int i = 0; i < 100 && (cur = file_read_ll(TINY "/memory.current")) > 0; i++)
		t_sleep_ns(20000000);
	printf("#   memory.current after the child: %lld\n", cur);
	CHECK(rmdir(TINY) == 0, "rmdir %s: %s", TINY, strerror(errno));
}

SCENARIO(full_cgroup_enomem, "opens in a full memory cgroup fail with ENOMEM; nothing leaks")
{
	char ctl[256];
	int base;

	if (access(CG "/cgroup.controllers", F_OK))
		mount("cgroup2", CG, "cgroup2", 0, NULL);
	if (file_read(CG "/cgroup.controllers", ctl, sizeof(ctl)) < 0 || !strstr(ctl, "memory"))
		SKIP("no cgroup v2 memory controller");
	file_write(CG "/cgroup.subtree_control", "+memory");
	t_sleep_ns(20000000);
	base = t_module_refs();
	round_(false, base);
	round_(true, base);
}

int main(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		t_die("mmap");
	return t_main("t_memcg");
}
