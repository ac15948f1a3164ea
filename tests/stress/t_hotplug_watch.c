// SPDX-License-Identifier: GPL-2.0
/*
 * t_hotplug_watch: the long-slice watch switched on, for the first time since the module was
 * loaded, while CPU 0 keeps its interrupts off 4 ms at a time (csf_selftest action=irqoff), then
 * CPU 1 taken offline and back 40 times. Learning the scheduler once made a kthread
 * SCHED_DEADLINE and then normal again, which armed its inactive timer: firing while its CPU
 * went down, it divided by zero in inactive_task_timer() (6.1 and 6.12). Afterwards the watch
 * must still work: switching it off returns, and a long slice on CPU 1 is reported, with the
 * three tasks waiting behind it. Last, with the module loaded afresh and the watch switched on
 * while CPU 1 is offline, CPU 1's count must be known once it is back.
 *
 * The module is loaded again for each part (it learns once per load): nothing may hold it.
 * Needs root and two CPUs.
 *
 *	t_hotplug_watch [MODULE.ko]	(default /csf/coarse_stat_fs.ko)
 */
#include "../tk.h"
#include "../tslice.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#define MS 1000000ull
#define WARN "/sys/module/coarse_stat_fs/parameters/slice_warn_us"
#define CPU1 "/sys/devices/system/cpu/cpu1/online"
#define ROUNDS "/sys/module/csf_selftest/parameters/irqoff_rounds"
#define SLICES CSF_MOUNT_POINT "/" CSF_SLICES_FILE
#define CYCLES 40
#define WAITERS 3

static int set_warn(unsigned int us)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", us);
	return file_write(WARN, v);
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/* Unmount, unload (once the last references are gone), load and mount the module. */
static int reload(const char *ko)
{
	int r = -1;

	umount(CSF_MOUNT_POINT);
	for (int i = 0; i < 50; i++) {
		if (!syscall(SYS_delete_module, "coarse_stat_fs", O_NONBLOCK) || errno == ENOENT) {
			r = 0;
			break;
		}
		t_sleep_ns(100 * MS);
	}
	return r ? -1 : tk_load_module(ko);
}

/* ---- A long slice on CPU 1 with WAITERS fair tasks waiting behind it ---- */

static atomic_int waiters_stop;

static void *waiter(void *arg)
{
	(void)arg;
	t_pin(1);
	prctl(PR_SET_NAME, "csf-waiter");
	while (!atomic_load(&waiters_stop))
		;
	return NULL;
}

struct fifo {
	int tid, err;
};

static void *fifo_spin(void *arg)
{
	struct sched_param sp = { .sched_priority = 99 };
	struct fifo *f = arg;

	f->tid = gettid();
	t_pin(1);
	prctl(PR_SET_NAME, "csf-fifo99");
	f->err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (!f->err)
		t_spin_ns(300 * MS);
	t_sleep_ns(20 * MS); /* the end of the slice */
	return NULL;
}

/*
 * Run it, with the watch on at 50 ms; the first "running" report of the spinner: its waiting
 * count, or INT_MIN if there was none.
 */
static int long_slice_waiting(void)
{
	static char buf[1 << 16];
	pthread_t w[WAITERS], th;
	struct fifo f = { 0 };
	int fd, waiting = INT_MIN;
	char want[32];
	ssize_t n;
	size_t len = 0;

	fd = open(SLICES, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return INT_MIN;
	while (read(fd, buf, sizeof(buf)) > 0) /* what came before */
		;
	atomic_store(&waiters_stop, 0);
	for (int i = 0; i < WAITERS; i++)
		pthread_create(&w[i], NULL, waiter, NULL);
	t_sleep_ns(100 * MS); /* they take turns on CPU 1 */
	pthread_create(&th, NULL, fifo_spin, &f);
	pthread_join(th, NULL);
	atomic_store(&waiters_stop, 1);
	for (int i = 0; i < WAITERS; i++)
		pthread_join(w[i], NULL);
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = 0;
	close(fd);
	if (f.err) {
		printf("#   SCHED_FIFO: %s\n", strerror(f.err));
		return INT_MIN;
	}
	snprintf(want, sizeof(want), " tid=%d ", f.tid);
	for (char *l = buf, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
		*nl = 0;
		if (!strstr(l, want) || !strstr(l, "event=running"))
			continue;
		printf("#   %.300s\n", l);
		if (waiting == INT_MIN && strstr(l, " waiting="))
			waiting = atoi(strstr(l, " waiting=") + 9);
	}
	return waiting;
}

static int set_cpu1(int online)
{
	return file_write(CPU1, online ? "1" : "0");
}

static const char *ko; /* the module to load: from the command line */

/*
 * The first part: the module loaded afresh, the watch switched on while CPU 0 keeps its
 * interrupts off, CPU 1 out and back CYCLES times, the watch off again. False if it could not
 * begin.
 */
static bool irqoff_hotplug(void)
{
	long before, after;
	int cycles = 0, r;

	r = reload(ko);
	CHECK(r == 0, "reloading %s: %s", ko, strerror(errno));
	if (r)
		return false;
	r = system("insmod /csf/csf_selftest.ko action=irqoff irq_cpu=0 irq_ms=4");
	CHECK(r == 0, "insmod csf_selftest action=irqoff");
	if (r)
		return false;
	for (int i = 0; i < 100 && read_long(ROUNDS) < 10; i++)
		t_sleep_ns(10 * MS);
	before = read_long(ROUNDS);
	CHECK(set_warn(1000) == 0, "slice_warn_us=1000: %s", strerror(errno));
	for (; cycles < CYCLES; cycles++)
		if (set_cpu1(0) || set_cpu1(1))
			break;
	after = read_long(ROUNDS);
	system("rmmod csf_selftest");
	set_cpu1(1);
	printf("#   %d cycles; interrupts went off %ld times meanwhile\n", cycles, after - before);
	CHECK_EQ(cycles, CYCLES);
	CHECK(before >= 10 && after > before, "irqoff rounds %ld, then %ld", before, after);
	CHECK(set_warn(0) == 0, "switching the watch off: %s", strerror(errno));
	return true;
}

/* The first part ran in this program (well or not): "afterwards" does not run it again. */
static bool irqoff_hotplug_ran;

SCENARIO(irqoff_hotplug_40,
	 "the watch switched on while CPU 0 keeps interrupts off, then CPU 1 out and back 40 times")
{
	irqoff_hotplug_ran = true;
	irqoff_hotplug();
}

SCENARIO(afterwards_reported,
	 "afterwards: a long slice on CPU 1 is reported, with the 3 tasks waiting behind it")
{
	int waiting;

	if (!irqoff_hotplug_ran) {
		printf("#   first the scenario before, on which this one builds\n");
		irqoff_hotplug_ran = true;
		if (!irqoff_hotplug())
			return;
	}
	REQUIRE(set_warn(50000) == 0, "slice_warn_us=50000: %s", strerror(errno));
	waiting = long_slice_waiting();
	set_warn(0);
	REQUIRE(waiting != INT_MIN, "no running report of the spinner");
	CHECK(t_waiting_ok(waiting, WAITERS), "waiting %d, %d tasks waiting", waiting, WAITERS);
}

SCENARIO(fresh_with_cpu1_offline,
	 "loaded afresh, switched on with CPU 1 offline: CPU 1's count once it is back")
{
	int waiting;

	REQUIRE(reload(ko) == 0, "reloading %s: %s", ko, strerror(errno));
	REQUIRE(set_cpu1(0) == 0, "cpu1 offline: %s", strerror(errno));
	CHECK(set_warn(50000) == 0, "slice_warn_us=50000: %s", strerror(errno));
	CHECK(set_cpu1(1) == 0, "cpu1 online: %s", strerror(errno));
	t_sleep_ns(500 * MS); /* the kthreads a CPU coming online wakes there */
	waiting = long_slice_waiting();
	set_warn(0);
	REQUIRE(waiting != INT_MIN, "no running report of the spinner");
	CHECK(t_waiting_ok(waiting, WAITERS), "waiting %d, %d tasks waiting", waiting, WAITERS);
}

int main(int argc, char **argv)
{
	int rc;

	ko = argc > 1 ? argv[1] : "/csf/coarse_stat_fs.ko";
	if (geteuid() != 0) {
		printf("# t_hotplug_watch needs root\n");
		return 4;
	}
	if (access(CPU1, W_OK)) {
		printf("# t_hotplug_watch needs CPU 1, and CPU hotplug\n");
		return 4;
	}
	t_pin(0);
	/* Its stopper on CPU 1 would split the slice measured below. */
	file_write("/proc/sys/kernel/soft_watchdog", "0");
	printf("# kernel BTF %s, PREEMPT_RT %s\n",
	       access("/sys/kernel/btf/vmlinux", R_OK) ? "absent" : "present",
	       t_preempt_rt() ? "yes" : "no");
	rc = t_main("t_hotplug_watch");
	set_cpu1(1);
	set_warn(0);
	file_write("/proc/sys/kernel/soft_watchdog", "1");
	/* What the module said it learned, each time (after the summary line: t_main prints it). */
	fflush(stdout);
	system("dmesg | grep 'slice watch' | sed 's/^/# /'");
	return rc;
}
