// SPDX-License-Identifier: GPL-2.0
/*
 * t_lib: the library in the environments real programs bring: a shared object that included it
 * is dlclose()d while its threads live; CPUID faults (rr, arch_prctl(ARCH_SET_CPUID)); calls with
 * bad arguments. Built as a dynamic executable (dlopen() needs one), unlike the other tests.
 */
#include "../t.h"

#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <asm/prctl.h>
#endif

#define SKIPPED 77

static int ready[2], go[2];
static int (*dl_snap)(void);

static void *dl_thread(void *arg)
{
	char c = 0;

	(void)arg;
	if (dl_snap() || write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
		t_die("dl_thread");
	return NULL; /* exits after the object was dlclose()d: its destructor must still run */
}

static int count_mappings(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, CSF_THREAD_FILE) != NULL;
	if (f)
		fclose(f);
	return n;
}

/* In a child: dlopen the object, let a thread map its page through it, dlclose, end the thread. */
static int dlclose_child(const char *dir)
{
	char path[4096], c = 0;
	pthread_t th;
	void *h;

	snprintf(path, sizeof(path), "%s/t_lib_dl.so", dir);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("#   dlopen: %s\n", dlerror());
		return 10;
	}
	dl_snap = (int (*)(void))dlsym(h, "t_lib_dl_snap");
	if (!dl_snap || pipe(ready) || pipe(go))
		return 11;
	pthread_create(&th, NULL, dl_thread, NULL);
	if (read(ready[0], &c, 1) != 1)
		return 12;
	if (count_mappings() != 1)
		return 13;
	dlclose(h);
	if (write(go[1], &c, 1) != 1)
		return 14;
	pthread_join(th, NULL); /* before the fix: SIGSEGV in the thread's exit */
	return count_mappings() == 0 ? 0 : 15; /* and the page was unmapped */
}

/* An exec'ed child: CPUID faults from its first instruction of interest on. */
static int cpuid_child(void)
{
	struct csf_snap a, b;
	uint64_t t0, cyc;

#if defined(__x86_64__)
	if (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0)) {
		printf("#   ARCH_SET_CPUID: %s\n", strerror(errno));
		return SKIPPED;
	}
#else
	return SKIPPED; /* no CPUID: the scenario says so before it gets here */
#endif
	t0 = csf_rdtsc(); /* before any page is mapped */
	if (csf_thread_snap(&a) || csf_thread_cyc(CSF_ONCPU, &cyc))
		return 20;
	t_spin_ns(1000000);
	if (csf_thread_snap(&b) || csf_rdtsc() <= t0 || b.tsc <= a.tsc)
		return 21;
	return 0;
}

static int wait_status(pid_t pid)
{
	int status = -1;

	waitpid(pid, &status, 0);
	return status;
}

static char self[4096]; /* this program's path, for the shared object beside it and re-exec */

SCENARIO(dlclose_live_threads,
	 "a shared object that used the library can be dlclose()d while its threads live")
{
	char dir[4096];
	pid_t pid;
	int st;

	snprintf(dir, sizeof(dir), "%s", self);
	pid = fork();
	if (pid == 0)
		_exit(dlclose_child(dirname(dir)));
	st = wait_status(pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %s %d",
	      WIFSIGNALED(st) ? "killed by signal" : "exited with",
	      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

SCENARIO(no_cpuid, "the library never executes CPUID, which can fault")
{
	pid_t pid;
	int st;

#if !defined(__x86_64__)
	SKIP("CPUID is x86-64's: this CPU has nothing of it to fault");
#endif
	pid = fork();
	if (pid == 0) {
		execl(self, self, "cpuid", (char *)NULL);
		_exit(99);
	}
	st = wait_status(pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == SKIPPED)
		SKIP("this CPU or kernel has no CPUID faulting");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %s %d",
	      WIFSIGNALED(st) ? "killed by signal" : "exited with",
	      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

SCENARIO(bad_bucket, "csf_page_cyc() and csf_thread_cyc() refuse a bucket that is not a state")
{
	struct csf_snap s;
	uint64_t cyc = 7;

	t_snap(&s);
	errno = 0;
	CHECK_EQ(csf_page_cyc(csf__thread.page, CSF_NR_STATES), 0);
	CHECK_EQ(errno, EINVAL);
	errno = 0;
	CHECK_EQ(csf_page_cyc(csf__thread.page, 1000000), 0);
	CHECK_EQ(errno, EINVAL);
	CHECK_ERRNO(csf_thread_cyc(CSF_NR_STATES, &cyc), EINVAL);
	CHECK_EQ(cyc, 7);
}

int main(int argc, char **argv)
{
	ssize_t n;

	if (argc == 2 && !strcmp(argv[1], "cpuid"))
		return cpuid_child();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		t_die("readlink");
	self[n] = 0;
	return t_main("t_lib");
}
