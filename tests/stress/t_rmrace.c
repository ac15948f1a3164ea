// SPDX-License-Identifier: GPL-2.0
/*
 * t_rmrace: rmmod racing the exit of the last registered thread. Each round a child registers
 * a thread and parks its object (a second thread closes the descriptor: registered, no file
 * open), the filesystem is unmounted, and rmmod must be refused. Then two threads call
 * delete_module() as fast as they can while the child exits (or, every other round, is killed
 * with SIGKILL): no crash, and one of them succeeds once the thread is gone (its object is freed
 * an RCU grace period after the exit). The module is then loaded and mounted again.
 *
 *	t_rmrace [MODULE.ko]	(default /csf/coarse_stat_fs.ko)
 */
#include "../tk.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define ROUNDS 20
#define NAME "coarse_stat_fs"

static atomic_int unloaded;
static atomic_long refused;

static int delete_module(void)
{
	return (int)syscall(SYS_delete_module, NAME, O_NONBLOCK);
}

static void *racer(void *arg)
{
	uint64_t give_up = mono_ns() + 10000000000ull;

	(void)arg;
	while (!atomic_load(&unloaded) && mono_ns() < give_up) {
		if (delete_module() == 0 || errno == ENOENT)
			atomic_store(&unloaded, 1);
		else
			atomic_fetch_add(&refused, 1);
	}
	return NULL;
}

static void *closer(void *arg)
{
	close((int)(long)arg);
	return NULL;
}

/* Register a thread, park its object, say so, and exit when told (or be killed). */
static void holder(int ready, int go)
{
	int fd = open(CSF_MOUNT_POINT "/" CSF_THREAD_FILE, O_RDONLY);
	pthread_t th;
	char c = 'r';

	if (fd < 0)
		_exit(10);
	pthread_create(&th, NULL, closer, (void *)(long)fd);
	pthread_join(th, NULL);
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(11);
	_exit(0);
}

static const char *ko; /* the module's file, from argv: to load it again */

SCENARIO(rmmod_race, "rmmod racing the last registered thread's exit")
{
	long held_refusals = 0, killed = 0, rounds = 0;
	uint64_t rng = 0x5a3e;

	REQUIRE(access(ko, R_OK) == 0, "%s: %s", ko, strerror(errno));
	REQUIRE(t_module_refs_settle(1) == 1, "the module is in use (%d references)",
		t_module_refs());
	for (int r = 0; r < ROUNDS; r++) {
		int ready[2], go[2], status;
		bool kill_it = r % 2;
		pthread_t th[2];
		char c;
		pid_t pid;

		if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC))
			t_die("pipe");
		pid = fork();
		if (pid == 0)
			holder(ready[1], go[0]);
		REQUIRE(read(ready[0], &c, 1) == 1, "round %d: the holder did not register", r);
		REQUIRE(umount2(CSF_MOUNT_POINT, 0) == 0, "round %d: umount: %s", r,
			strerror(errno));
		CHECK(delete_module() != 0, "round %d: rmmod succeeded with a thread registered",
		      r);
		held_refusals++;
		atomic_store(&unloaded, 0);
		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, racer, NULL);
		/* let the racers start, then end the thread while they try */
		t_sleep_ns(tk_below(&rng, 3000000));
		if (kill_it) {
			kill(pid, SIGKILL);
			killed++;
		} else if (write(go[1], "g", 1) != 1) {
			t_die("write");
		}
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		waitpid(pid, &status, 0);
		close(ready[0]);
		close(ready[1]);
		close(go[0]);
		close(go[1]);
		CHECK(atomic_load(&unloaded), "round %d: rmmod still refused 10 s after the exit",
		      r);
		if (!atomic_load(&unloaded))
			break;
		REQUIRE(access("/sys/module/" NAME, F_OK) != 0, "round %d: still loaded", r);
		REQUIRE(tk_load_module(ko) == 0, "round %d: cannot load and mount %s again: %s", r,
			ko, strerror(errno));
		rounds++;
	}
	printf("FIGURE rmmod-race rounds %ld refused-while-held %ld refused-while-racing %ld "
	       "holders-killed %ld\n",
	       rounds, held_refusals, atomic_load(&refused), killed);
}

int main(int argc, char **argv)
{
	int ret;

	ko = argc > 1 ? argv[1] : "/csf/" NAME ".ko";
	ret = t_main("t_rmrace");
	/* Whatever happened, leave the module loaded and mounted for what follows. */
	if (access("/sys/module/" NAME, F_OK))
		tk_load_module(ko);
	else if (access(CSF_MOUNT_POINT "/" CSF_THREAD_FILE, F_OK))
		mount("none", CSF_MOUNT_POINT, CSF_FS_TYPE, 0, NULL);
	return ret;
}
