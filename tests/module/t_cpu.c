// SPDX-License-Identifier: GPL-2.0
/*
 * t_cpu: the cpu page against /proc/stat, its refresh period, CPU hotplug, and what it refuses.
 */
#include "../t.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MS 1000000ull
#define PERIOD "/sys/module/coarse_stat_fs/parameters/period_us"
#define CPU1_ONLINE "/sys/devices/system/cpu/cpu1/online"
#define TICK_NS 10000000ull /* /proc/stat's USER_HZ tick */
#define NFIELDS 10

static const char *const field_names[NFIELDS] = {
	"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"
};

static void t_cpu_snap(struct csf_cpu_snap *c, int cpu)
{
	if (csf_cpu_snap(c, cpu))
		t_die("csf_cpu_snap(%d)", cpu);
}

static void row_fields(const struct csf_cpu_row *r, uint64_t *f)
{
	f[0] = r->user;
	f[1] = r->nice;
	f[2] = r->system;
	f[3] = r->idle;
	f[4] = r->iowait;
	f[5] = r->irq;
	f[6] = r->softirq;
	f[7] = r->steal;
	f[8] = r->guest;
	f[9] = r->guest_nice;
}

/* Parse /proc/stat-format cpu lines as procps' libproc2 does; returns the lines found. */
static int parse_stat(const char *text, uint64_t sum[NFIELDS], uint64_t cpus[][NFIELDS], int *ids,
		      int max)
{
	const char *p = text;
	int n = 0, id;
	unsigned long long v[NFIELDS];

	if (sscanf(p, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) < 8)
		return -1;
	for (int i = 0; i < NFIELDS; i++)
		sum[i] = v[i];
	while ((p = strchr(p, '\n')) && n < max) {
		p++;
		if (sscanf(p, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &id, &v[0],
			   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) < 9)
			break;
		ids[n] = id;
		for (int i = 0; i < NFIELDS; i++)
			cpus[n][i] = v[i];
		n++;
	}
	return n;
}

static void slurp(const char *cmd_or_path, bool is_cmd, char *buf, size_t len)
{
	FILE *f = is_cmd ? popen(cmd_or_path, "r") : fopen(cmd_or_path, "r");
	size_t n;

	if (!f)
		t_die("%s", cmd_or_path);
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	if (is_cmd)
		pclose(f);
	else
		fclose(f);
}

static unsigned int read_period(void)
{
	char buf[32] = "";
	int fd = open(PERIOD, O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) < 0)
		t_die("read " PERIOD);
	close(fd);
	return (unsigned int)strtoul(buf, NULL, 10);
}

/*
 * Mean time between refreshes over about 200 ms, in us, seen by polling update_mono_ns; *away_us
 * is the longest that one of the poll's 100 us sleeps overran: how long this guest was not run,
 * which delays the page's timer as much (a loaded host starves the guest's vCPUs).
 */
static double measured_period_us(double *away_us)
{
	struct csf_cpu_snap c;
	uint64_t first = 0, last = 0, end = mono_ns() + 200 * MS, away = 0;
	int changes = -1;

	while (mono_ns() < end) {
		uint64_t t0;

		t_cpu_snap(&c, CSF_CPU_ALL);
		if (c.update_mono_ns != last) {
			if (!first)
				first = c.update_mono_ns;
			last = c.update_mono_ns;
			changes++;
		}
		t0 = mono_ns();
		t_sleep_ns(100000);
		t0 = mono_ns() - t0 - 100000;
		if (t0 > away)
			away = t0;
	}
	*away_us = (double)away / 1000;
	return changes > 0 ? (double)(last - first) / changes / 1000 : 1e9;
}

/* Whether the refresh timer is queued; read a few times, as it is not while it runs. */
static bool timer_listed(void)
{
	static char buf[1 << 20];

	for (int i = 0; i < 3; i++) {
		slurp("/proc/timer_list", false, buf, sizeof(buf));
		if (strstr(buf, "csf_cpu_tick"))
			return true;
	}
	return false;
}

static atomic_int reading;

/* Read the page as fast as possible while CPUs go offline and online. */
static void *reader(void *arg)
{
	struct csf_cpu_snap c;
	long *n = arg;

	while (atomic_load(&reading)) {
		if (csf_cpu_snap(&c, CSF_CPU_ALL) || csf_cpu_snap(&c, 1))
			t_die("csf_cpu_snap during hotplug");
		(*n)++;
	}
	return NULL;
}

struct rt_reader {
	atomic_int stop;
	atomic_long calls; /* progress, for the watchdog */
	atomic_int tid;
	uint64_t max_ns; /* the slowest csf_cpu_snap() */
};

/*
 * A SCHED_FIFO 99 thread on CPU 0, where the page's timer runs, that wakes at random moments and
 * reads the page. Its wakeups preempt whatever runs on CPU 0, the page's writer included where
 * the writer can be preempted (PREEMPT_RT runs soft timers in a thread).
 */
static void *rt_read(void *arg)
{
	struct sched_param sp = { .sched_priority = 99 };
	struct rt_reader *r = arg;
	struct csf_cpu_snap c;
	unsigned int seed = 1;

	atomic_store(&r->tid, gettid());
	t_pin(0);
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		t_die("SCHED_FIFO");
	while (!atomic_load(&r->stop)) {
		uint64_t t0;

		t_sleep_ns(rand_r(&seed) % 700000);
		t0 = mono_ns();
		if (csf_cpu_snap(&c, CSF_CPU_ALL))
			t_die("csf_cpu_snap");
		t0 = mono_ns() - t0;
		if (t0 > r->max_ns)
			r->max_ns = t0;
		atomic_fetch_add(&r->calls, 1);
	}
	return NULL;
}

SCENARIO(page_maps, "the page maps: header, rows, one per possible CPU plus the sum")
{
	struct csf_cpu_snap c;
	struct stat st;
	int ncpu;
	int fd = open(CSF_MOUNT_POINT "/" CSF_CPU_FILE, O_RDONLY);

	REQUIRE(fd >= 0, "open: %s", strerror(errno));
	REQUIRE(fstat(fd, &st) == 0, "fstat");
	CHECK(st.st_size > 0 && st.st_size % 4096 == 0, "st_size %lld", (long long)st.st_size);
	close(fd);
	ncpu = csf_cpu_count();
	CHECK_EQ(ncpu, sysconf(_SC_NPROCESSORS_CONF));
	REQUIRE(csf_cpu_snap(&c, CSF_CPU_ALL) == 0, "csf_cpu_snap: %s", strerror(errno));
	CHECK_EQ(c.row.cpu, CSF_CPU_ALL);
	CHECK_EQ(c.period_us, read_period());
	CHECK(csf_cpu_snap(&c, 1) == 0 && c.row.cpu == 1 && c.row.online == 1, "cpu 1 row");
	CHECK_ERRNO(csf_cpu_snap(&c, ncpu), EINVAL);
	CHECK_ERRNO(csf_cpu_snap(&c, -2), EINVAL);
}

SCENARIO(sum_row, "the sum row is the sum of the CPU rows")
{
	struct csf_cpu_row rows[64];
	uint64_t s[NFIELDS] = { 0 }, f[NFIELDS], when;
	int n = csf_cpu_snap_all(rows, 64, &when), ncpu = csf_cpu_count();

	REQUIRE(n == ncpu + 1, "csf_cpu_snap_all: %d rows", n);
	for (int i = 1; i < n; i++) {
		row_fields(&rows[i], f);
		for (int k = 0; k < NFIELDS; k++)
			s[k] += f[k];
	}
	row_fields(&rows[0], f);
	for (int k = 0; k < NFIELDS; k++)
		CHECK(f[k] == s[k], "%s: sum row %llu, sum of rows %llu", field_names[k],
		      (unsigned long long)f[k], (unsigned long long)s[k]);
}

SCENARIO(near_proc_stat, "every field is within a period and two ticks of /proc/stat")
{
	static char stat[16384];
	struct csf_cpu_snap c, d;
	int ncpu = csf_cpu_count();
	uint64_t sum[NFIELDS], cpus[64][NFIELDS], f[NFIELDS];
	int ids[64], n;
	uint64_t t0, t1;
	double tol;

	REQUIRE(ncpu > 0, "csf_cpu_count: %s", strerror(errno));
	t_spin_ns(20 * MS); /* some user and system time on this CPU */
	t0 = mono_ns();
	slurp("/proc/stat", false, stat, sizeof(stat));
	REQUIRE(csf_cpu_snap(&c, CSF_CPU_ALL) == 0, "csf_cpu_snap: %s", strerror(errno));
	t1 = mono_ns();
	n = parse_stat(stat, sum, cpus, ids, 64);
	REQUIRE(n == ncpu, "/proc/stat: %d cpu lines", n);
	/*
	 * A CPU accrues at most the elapsed time, over all its fields. Allow how stale
	 * the page is, the reading time, /proc/stat's truncation to ticks of 10 ms and
	 * two scheduler ticks of accounting granularity.
	 */
	tol = (double)(t1 - c.update_mono_ns) + (double)(t1 - t0) + (double)TICK_NS +
	      (double)(8 * MS);
	printf("#   page %.1f ms old, tolerance %.1f ms per CPU\n",
	       (double)(t1 - c.update_mono_ns) / 1e6, tol / 1e6);
	row_fields(&c.row, f);
	for (int k = 0; k < NFIELDS; k++)
		CHECK(fabs((double)f[k] - (double)sum[k] * TICK_NS) <= tol * ncpu,
		      "sum %s: page %.3f s, /proc/stat %.3f s", field_names[k], (double)f[k] / 1e9,
		      (double)sum[k] * TICK_NS / 1e9);
	for (int i = 0; i < n; i++) {
		REQUIRE(csf_cpu_snap(&d, ids[i]) == 0, "cpu %d", ids[i]);
		row_fields(&d.row, f);
		for (int k = 0; k < NFIELDS; k++)
			CHECK(fabs((double)f[k] - (double)cpus[i][k] * TICK_NS) <= tol,
			      "cpu%d %s: page %.3f s, /proc/stat %.3f s", ids[i], field_names[k],
			      (double)f[k] / 1e9, (double)cpus[i][k] * TICK_NS / 1e9);
	}
	CHECK(c.row.idle > 0 && c.row.user + c.row.system > 0, "no idle or busy time");
}

SCENARIO(csfcat_cpu,
	 "csfcat cpu reads like /proc/stat to a procps-style parser, in ticks and in ns")
{
	static char out[16384], outns[16384];
	uint64_t sum[NFIELDS], cpus[64][NFIELDS], sumns[NFIELDS], cpusns[64][NFIELDS];
	int ids[64], idsns[64], ncpu = csf_cpu_count();

	REQUIRE(ncpu > 0, "csf_cpu_count: %s", strerror(errno));
	slurp("csfcat cpu", true, out, sizeof(out));
	slurp("csfcat cpu --ns", true, outns, sizeof(outns));
	printf("%s", out);
	REQUIRE(parse_stat(out, sum, cpus, ids, 64) == ncpu, "csfcat cpu: %s", out);
	REQUIRE(parse_stat(outns, sumns, cpusns, idsns, 64) == ncpu, "--ns: %s", outns);
	CHECK(!strncmp(out, "cpu  ", 5), "the sum line starts with \"cpu  \", as in /proc/stat");
	for (int k = 0; k < NFIELDS; k++)
		CHECK(sum[k] <= sumns[k] / TICK_NS + 1 && sumns[k] / TICK_NS <= sum[k] + 100,
		      "%s: %llu ticks, %llu ns", field_names[k], (unsigned long long)sum[k],
		      (unsigned long long)sumns[k]);
}

SCENARIO(period_refresh, "the page is refreshed every period_us, which can change at run time")
{
	unsigned int old = read_period();
	struct csf_cpu_snap c;
	double p, p2, away, away2;

	p = measured_period_us(&away);
	printf("#   period_us %u: refreshed every %.0f us (the guest away up to %.0f us)\n", old, p,
	       away);
	CHECK(p > old * 0.8, "refreshed every %.0f us", p);
	REQUIRE(file_write(PERIOD, "2000") == 0, "set period_us: %s", strerror(errno));
	CHECK_EQ(read_period(), 2000);
	p2 = measured_period_us(&away2);
	printf("#   period_us 2000: refreshed every %.0f us (the guest away up to %.0f us)\n", p2,
	       away2);
	CHECK(p2 > 1600, "refreshed every %.0f us", p2);
	/* What host load cannot change: the shorter period refreshes more often. */
	CHECK(p2 < p / 2, "period_us 2000 refreshed every %.0f us, 10000 every %.0f us", p2, p);
	/* How late the timer may be depends on how long the guest was not run (>= 2 ms: load). */
	if (away < 2000)
		CHECK_TIMING(p < old * 1.5 + 2000, "refreshed every %.0f us", p);
	if (away2 < 2000)
		CHECK_TIMING(p2 < 5000, "refreshed every %.0f us", p2);
	t_cpu_snap(&c, CSF_CPU_ALL);
	CHECK_EQ(c.period_us, 2000);
	CHECK(file_write(PERIOD, "10000") == 0, "restore: %s", strerror(errno));
}

SCENARIO(period_bounds, "period_us refuses values out of bounds or not numbers")
{
	CHECK_ERRNO(file_write(PERIOD, "999"), EINVAL);
	CHECK_ERRNO(file_write(PERIOD, "10000001"), EINVAL);
	CHECK_ERRNO(file_write(PERIOD, "-5"), EINVAL);
	CHECK_ERRNO(file_write(PERIOD, "fast"), EINVAL);
	CHECK_EQ(read_period(), 10000);
	CHECK(file_write(PERIOD, "1000") == 0 && file_write(PERIOD, "10000000") == 0 &&
		      file_write(PERIOD, "10000") == 0,
	      "the bounds themselves: %s", strerror(errno));
}

SCENARIO(offline_cpu,
	 "an offline CPU is flagged and keeps its last values; the sum never goes back")
{
	uint64_t before[NFIELDS], during[NFIELDS], f[NFIELDS];
	struct csf_cpu_snap c, d, s0, s1;
	pthread_t th;
	long reads = 0;

	atomic_store(&reading, 1);
	pthread_create(&th, NULL, reader, &reads);
	t_cpu_snap(&s0, CSF_CPU_ALL);
	REQUIRE(file_write(CPU1_ONLINE, "0") == 0, "offline cpu1: %s", strerror(errno));
	t_sleep_ns(50 * MS);
	t_cpu_snap(&c, 1);
	CHECK_EQ(c.row.online, 0);
	row_fields(&c.row, before);
	t_sleep_ns(50 * MS);
	t_cpu_snap(&d, 1);
	row_fields(&d.row, during);
	CHECK(d.update_mono_ns > c.update_mono_ns, "page not refreshed while cpu1 offline");
	for (int k = 0; k < NFIELDS; k++)
		CHECK(before[k] == during[k], "offline cpu1 %s changed: %llu -> %llu",
		      field_names[k], (unsigned long long)before[k], (unsigned long long)during[k]);
	t_cpu_snap(&s1, CSF_CPU_ALL);
	row_fields(&s0.row, before);
	row_fields(&s1.row, f);
	/* Except iowait, which /proc/stat can take back too (docs/interface.md). */
	for (int k = 0; k < NFIELDS; k++)
		CHECK(k == 4 || f[k] >= before[k], "sum %s went back", field_names[k]);

	REQUIRE(file_write(CPU1_ONLINE, "1") == 0, "online cpu1: %s", strerror(errno));
	t_sleep_ns(50 * MS);
	t_cpu_snap(&c, 1);
	CHECK_EQ(c.row.online, 1);
	row_fields(&c.row, f);
	CHECK(f[3] + f[0] + f[2] > during[3] + during[0] + during[2], "cpu1 not counting again");
	atomic_store(&reading, 0);
	pthread_join(th, NULL);
	printf("#   %ld reads during hotplug\n", reads);
}

SCENARIO(mmap_rules, "mmap of cpu: only MAP_SHARED, PROT_READ, offset 0, up to st_size")
{
	int fd = open(CSF_MOUNT_POINT "/" CSF_CPU_FILE, O_RDONLY);
	struct stat st;

	REQUIRE(fd >= 0 && fstat(fd, &st) == 0, "open: %s", strerror(errno));
	CHECK_ERRNO(open(CSF_MOUNT_POINT "/" CSF_CPU_FILE, O_RDWR), EACCES);
	CHECK_ERRNO(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0), EINVAL);
	CHECK_ERRNO(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), EACCES);
	CHECK_ERRNO(mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0), EPERM);
	CHECK_ERRNO(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096), ENXIO);
	CHECK_ERRNO(mmap(NULL, (size_t)st.st_size + 4096, PROT_READ, MAP_SHARED, fd, 0), ENXIO);
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK_ERRNO(mprotect(m, 4096, PROT_READ | PROT_WRITE), EACCES);
	munmap(m, (size_t)st.st_size);
	close(fd);
}

SCENARIO(snap_all_negative, "csf_cpu_snap_all() refuses a negative count")
{
	struct csf_cpu_row rows[2];

	CHECK_ERRNO(csf_cpu_snap_all(rows, -1, NULL), EINVAL);
	CHECK_EQ(csf_cpu_snap_all(rows, 0, NULL), 0);
}

SCENARIO(rt_reader, "a real-time reader on the writer's CPU never waits on a preempted writer")
{
	struct rt_reader r = { 0 };
	struct sched_param other = { 0 };
	uint64_t end;
	long last = 0;
	pthread_t th;

	csf_cpu_unmap(); /* the next map starts the timer on CPU 0, the reader's */
	REQUIRE(file_write(PERIOD, "1000") == 0, "period_us: %s", strerror(errno));
	t_pin(1);
	pthread_create(&th, NULL, rt_read, &r);
	/* Watchdog on CPU 1: a reader that makes no progress is spinning on an odd seq. */
	for (end = mono_ns() + 3000 * MS; mono_ns() < end;) {
		t_sleep_ns(500 * MS);
		if (atomic_load(&r.calls) == last) {
			/* Let the writer run again, so the reader can finish and report. */
			sched_setscheduler(atomic_load(&r.tid), SCHED_OTHER, &other);
			break;
		}
		last = atomic_load(&r.calls);
	}
	atomic_store(&r.stop, 1);
	pthread_join(th, NULL);
	printf("#   %ld reads, the slowest %.3f ms\n", atomic_load(&r.calls),
	       (double)r.max_ns / 1e6);
	CHECK(r.max_ns < 100 * MS, "a read waited %.1f ms for the writer", (double)r.max_ns / 1e6);
	file_write(PERIOD, "10000");
	t_pin(0);
}

SCENARIO(timer_stops, "with no one left using it, the page's timer stops")
{
	struct csf_cpu_snap c;

	t_cpu_snap(&c, CSF_CPU_ALL); /* a user, whichever scenarios ran before */
	CHECK(timer_listed(), "no csf_cpu_tick timer while mapped");
	csf_cpu_unmap();
	CHECK(!timer_listed(), "csf_cpu_tick still queued with no user");
	CHECK(csf_cpu_snap(&c, CSF_CPU_ALL) == 0, "remap: %s", strerror(errno));
	CHECK(mono_ns() - c.update_mono_ns < 50 * MS, "a fresh page is %.1f ms old",
	      (double)(mono_ns() - c.update_mono_ns) / 1e6);
	CHECK(timer_listed(), "no timer after remapping");
}

int main(void)
{
	return t_main("t_cpu");
}
