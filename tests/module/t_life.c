// SPDX-License-Identifier: GPL-2.0
/*
 * t_life: the life of a thread's object. Each registered object and each open file holds a
 * reference on the module, so /sys/module/coarse_stat_fs/refcnt shows when objects come and
 * go: +1 for each object, registered or not, and +1 for each open file (a mapping keeps its
 * file open). An object lives while it is registered or any file names it.
 */
#include "../t.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MS 1000000ull
#define PATH CSF_MOUNT_POINT "/" CSF_THREAD_FILE

static const char *self_exe; /* this program, for exec */

static const struct csf_thread_page *map_page(int fd)
{
	void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		t_die("mmap");
	return m;
}

/*
 * Fork a child that opens thread-self (with open_flags), maps it, closes the descriptor if asked,
 * and execs this program as "exec-child", which exits 0 if its page is the same object. Returns
 * the child's wait status.
 */
static int exec_child(int open_flags, bool close_fd)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(PATH, open_flags);
		const struct csf_thread_page *p = map_page(fd);
		char start[32];

		if (close_fd)
			close(fd);
		snprintf(start, sizeof(start), "%llu", (unsigned long long)p->start_tsc);
		execl(self_exe, self_exe, "exec-child", start, (char *)NULL);
		_exit(99);
	}
	waitpid(pid, &status, 0);
	return status;
}

/* ---- threads for the scenarios ---- */

struct handoff {
	const struct csf_thread_page *page; /* owner's mapping, unmapped by the other thread */
	uint64_t start_tsc;
	int step;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void wait_step(struct handoff *h, int step)
{
	pthread_mutex_lock(&h->mu);
	while (h->step < step)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

static void set_step(struct handoff *h, int step)
{
	pthread_mutex_lock(&h->mu);
	h->step = step;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/*
 * The module's reference count before any scenario, with nothing of this program registered
 * (main() reads it). The scenarios that compare with it come before those that leave the main
 * thread registered (the fork scenario's and the last one's snapshots).
 */
static int base_refs;

/* The owner: map, let the other thread drop the last reference, then reopen. */
static void *handoff_owner(void *arg)
{
	struct handoff *h = arg;
	int fd = open(PATH, O_RDONLY);
	const struct csf_thread_page *p;

	if (fd < 0)
		t_die("open");
	h->page = map_page(fd);
	h->start_tsc = h->page->start_tsc;
	close(fd);
	set_step(h, 1); /* the other thread unmaps now: the object is parked */
	wait_step(h, 2);
	t_sleep_ns(MS); /* switch out and in: parked callbacks only mark the page */

	fd = open(PATH, O_RDONLY); /* found again, reset */
	if (fd < 0)
		t_die("reopen");
	p = map_page(fd);
	CHECK(p->start_tsc > h->start_tsc, "not reset: start_tsc %llu, was %llu",
	      (unsigned long long)p->start_tsc, (unsigned long long)h->start_tsc);
	CHECK_EQ(p->flags & CSF_THREAD_PARKED, 0);
	CHECK_EQ(p->tid, gettid());
	CHECK_EQ(t_module_refs(), base_refs + 2);
	/* A sleep whose timer fires before it blocks switches nothing (t_exec): a few, then. */
	for (int i = 0; i < 100 && p->last_switch_tsc == p->start_tsc; i++)
		t_sleep_ns(MS);
	CHECK(p->nr_block > 0 && p->last_switch_tsc > p->start_tsc, "not accounting again");
	munmap((void *)p, 4096);
	close(fd);
	return NULL;
}

/* Wait up to a second for a thread of this process to be gone from /proc. */
static bool task_gone(uint32_t tid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/task/%u", tid);
	for (int i = 0; i < 200; i++) {
		if (stat(path, &st))
			return true;
		t_sleep_ns(5 * MS);
	}
	return false;
}

static void *open_and_exit(void *arg)
{
	struct csf_snap s;

	(void)arg;
	t_snap(&s); /* the library maps, and unmaps at thread exit */
	t_sleep_ns(MS);
	return NULL;
}

static void *exit_with_mapping(void *arg)
{
	int fd = open(PATH, O_RDONLY);

	if (fd < 0)
		t_die("open");
	*(const struct csf_thread_page **)arg = map_page(fd);
	close(fd);
	t_spin_ns(MS); /* on its CPU when it exits, as a thread always is */
	return NULL; /* exits registered; the mapping outlives it */
}

static void *churn(void *arg)
{
	long i = (long)arg;
	struct csf_snap s;
	int fd;

	switch (i % 3) {
	case 0: /* through the library, unmapped at exit */
		t_snap(&s);
		t_sleep_ns(100000);
		t_snap(&s);
		break;
	case 1: /* a descriptor kept open until the thread exits: closed by the process */
		fd = open(PATH, O_RDONLY);
		if (fd >= 0)
			close(fd);
		fd = open(PATH, O_RDONLY);
		(void)fd; /* closed below, by the main thread: a hand-off */
		return (void *)(long)fd;
	default: /* map and unmap at once */
		fd = open(PATH, O_RDONLY);
		if (fd >= 0) {
			munmap((void *)map_page(fd), 4096);
			close(fd);
		}
		break;
	}
	return (void *)-1L;
}

SCENARIO(one_object, "descriptors of one thread share one object")
{
	int fd1 = open(PATH, O_RDONLY), fd2 = open(PATH, O_RDONLY);
	const struct csf_thread_page *p1, *p2;

	REQUIRE(fd1 >= 0 && fd2 >= 0, "open: %s", strerror(errno));
	CHECK_EQ(t_module_refs(), base_refs + 3); /* one object, two files */
	p1 = map_page(fd1);
	p2 = map_page(fd2);
	CHECK(p1->start_tsc == p2->start_tsc && p1->tid == p2->tid, "two objects");
	t_sleep_ns(MS);
	CHECK(p1->last_switch_tsc == p2->last_switch_tsc, "pages differ");
	close(fd1);
	close(fd2);
	CHECK_EQ(t_module_refs(), base_refs + 3); /* the mappings hold the files */
	munmap((void *)p1, 4096);
	munmap((void *)p2, 4096);
	CHECK_EQ(t_module_refs_settle(base_refs), base_refs);
}

SCENARIO(last_close, "closing the last file unregisters; the next open starts afresh")
{
	int fd = open(PATH, O_RDONLY);
	const struct csf_thread_page *p;
	uint64_t start;

	REQUIRE(fd >= 0, "open: %s", strerror(errno));
	p = map_page(fd);
	start = p->start_tsc;
	munmap((void *)p, 4096);
	close(fd);
	CHECK_EQ(t_module_refs_settle(base_refs), base_refs);
	fd = open(PATH, O_RDONLY);
	p = map_page(fd);
	CHECK(p->start_tsc > start, "same object after the last close");
	munmap((void *)p, 4096);
	close(fd);
}

SCENARIO(exit_frees, "thread exit frees the object, also with the library's mapping")
{
	pthread_t th;

	pthread_create(&th, NULL, open_and_exit, NULL);
	pthread_join(th, NULL);
	CHECK_EQ(t_module_refs_settle(base_refs), base_refs);
}

SCENARIO(exit_registered, "a thread that exits registered unregisters; its mapping keeps the file")
{
	const struct csf_thread_page *p;
	struct csf_snap s1, s2;
	uint64_t sum = 0;
	pthread_t th;

	pthread_create(&th, NULL, exit_with_mapping, &p);
	pthread_join(th, NULL);
	/*
	 * pthread_join() returns when the thread has let go of its memory, which is before
	 * the end of its exit (and the tracepoint that unregisters it). Its /proc entry goes
	 * only after that.
	 */
	REQUIRE(task_gone(p->tid), "thread %u still in /proc after 1 s", p->tid);
	/* Unregistered, but the mapping's file still holds the object: +2 until munmap. */
	CHECK_EQ(t_module_refs_settle(base_refs + 2), base_refs + 2);

	/* The owner died on its CPU: the page is ended, and no longer counts on-CPU time. */
	csf_page_snap(p, &s1);
	t_sleep_ns(2 * MS);
	csf_page_snap(p, &s2);
	CHECK(s2.p.flags & CSF_THREAD_ENDED, "flags %#x: not ended", s2.p.flags);
	CHECK_EQ(s2.p.state, CSF_STATE_ENDED);
	CHECK(!s1.extrapolated && !s2.extrapolated, "a dead owner's page is extrapolated");
	CHECK(s2.p.oncpu_cyc == s1.p.oncpu_cyc && s2.tsc == s1.tsc,
	      "oncpu went on: %llu -> %llu cycles", (unsigned long long)s1.p.oncpu_cyc,
	      (unsigned long long)s2.p.oncpu_cyc);
	CHECK_EQ(csf_page_cyc(p, CSF_ONCPU), s2.p.oncpu_cyc);
	for (int i = 0; i < CSF_NR_STATES; i++)
		sum += s2.p.cyc[i];
	CHECK(sum == s2.tsc - s2.p.start_tsc, "the closed buckets do not add up");
	CHECK(t_ms(&s2, s2.p.oncpu_cyc) >= 0.5,
	      "the last stretch (a 1 ms spin) not closed: %.3f ms", t_ms(&s2, s2.p.oncpu_cyc));
	munmap((void *)p, 4096);
	CHECK_EQ(t_module_refs_settle(base_refs), base_refs);
}

SCENARIO(handoff, "a hand-off parks the object; the owner's reopen resets it")
{
	struct handoff h = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };
	pthread_t th;

	pthread_create(&th, NULL, handoff_owner, &h);
	wait_step(&h, 1);
	munmap((void *)h.page, 4096); /* the last reference, dropped by another thread */
	CHECK_EQ(t_module_refs_settle(base_refs + 1), base_refs + 1); /* parked, registered */
	set_step(&h, 2);
	pthread_join(th, NULL);
	CHECK_EQ(t_module_refs_settle(base_refs), base_refs);
}

SCENARIO(churn_many, "many threads registering and exiting concurrently leave nothing behind")
{
	enum { WAVES = 20, PER_WAVE = 16 };
	pthread_t th[PER_WAVE];

	for (int w = 0; w < WAVES; w++) {
		for (long i = 0; i < PER_WAVE; i++)
			pthread_create(&th[i], NULL, churn, (void *)i);
		for (int i = 0; i < PER_WAVE; i++) {
			void *ret;

			pthread_join(th[i], &ret);
			if ((long)ret >= 0)
				close((int)(long)ret); /* a dead thread's file */
		}
	}
	CHECK_EQ(t_module_refs_settle(base_refs), base_refs);
}

SCENARIO(fork_own_page, "a forked child maps its own page; the parent's mapping is not inherited")
{
	const void *parent_page;
	struct csf_snap a, b;
	int status = -1;
	pid_t pid;

	t_snap(&a); /* from here on, the main thread is registered */
	parent_page = csf__thread.page;
	/* VM_DONTCOPY cannot be undone: the kernel refuses MADV_DOFORK on the mapping. */
	CHECK_ERRNO(madvise((void *)parent_page, 4096, MADV_DOFORK), EINVAL);
	pid = fork();
	if (pid == 0) {
		struct csf_snap c;
		int bad = 0;

		/* The parent's mapping is gone (VM_DONTCOPY): msync says not mapped. */
		bad |= msync((void *)parent_page, 4096, MS_ASYNC) == 0 || errno != ENOMEM;
		if (csf_thread_snap(&c) != 0)
			_exit(1);
		bad |= c.p.tid != (uint32_t)gettid() || c.p.start_tsc <= a.p.start_tsc;
		_exit(bad);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
	t_snap(&b);
	CHECK(b.p.start_tsc == a.p.start_tsc && b.p.tid == (uint32_t)gettid(),
	      "parent's page changed owner");
}

SCENARIO(exec_keeps, "exec keeps the object of an inherited descriptor, not of a mapping")
{
	int fd = open(PATH, O_RDONLY), status;
	const struct csf_thread_page *p;

	REQUIRE(fd >= 0, "open: %s", strerror(errno));
	p = map_page(fd);

	/* The child's own object, with a descriptor open across exec. */
	status = exec_child(O_RDONLY, false);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "exec'd child saw another object (status %#x)", status);

	/* Only a mapping, lost at exec: the new program gets a new object. */
	status = exec_child(O_RDONLY | O_CLOEXEC, true);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1,
	      "after exec, a mapping-only object survived (status %#x)", status);
	munmap((void *)p, 4096);
	close(fd);
}

SCENARIO(library_unmaps, "the library unmaps at thread exit")
{
	struct csf_snap s;
	char line[256];
	pthread_t th;
	FILE *f;
	int n = 0;

	/* The main thread's own mapping, and one of a thread that has exited since. */
	t_snap(&s);
	pthread_create(&th, NULL, open_and_exit, NULL);
	pthread_join(th, NULL);
	t_sleep_ns(MS);
	f = fopen("/proc/self/maps", "r");
	REQUIRE(f, "maps");
	while (fgets(line, sizeof(line), f))
		n += strstr(line, CSF_THREAD_FILE) != NULL;
	fclose(f);
	CHECK_EQ(n, 1); /* the main thread's own */
}

int main(int argc, char **argv)
{
	self_exe = "/proc/self/exe";
	if (argc == 3 && !strcmp(argv[1], "exec-child")) {
		/* After exec: an inherited descriptor still names this thread's object. */
		struct csf_snap s;

		t_snap(&s);
		return s.p.start_tsc == strtoull(argv[2], NULL, 10) ? 0 : 1;
	}

	t_sleep_ns(10 * MS);
	base_refs = t_module_refs();
	printf("# module refcnt with nothing registered: %d\n", base_refs);
	return t_main("t_life");
}
