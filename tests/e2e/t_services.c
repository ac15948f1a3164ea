// SPDX-License-Identifier: GPL-2.0
/*
 * t_services: csfcat's two services under Debian's own systemd, installed as make install-user
 * and the csfcat package install them (packaging/csfcat-slices.service and csfcat-mem.service,
 * @BINDIR@ replaced, /etc/default/csfcat), checked through systemctl and journalctl: both start,
 * stay up and write their files; a restart reads the settings again and csfcat-slices puts
 * slice_warn_us back; with the module unloaded or unmounted csfcat-slices says so and retries at
 * RestartSec's pace, and comes back by itself once the module does; a setting it refuses, and a
 * kernel without DAMON for csfcat-mem, leave the service stopped with the reason in the journal.
 *
 * It runs in a boot of its own whose PID 1 is systemd (csf.systemd=1 in tests/list;
 * tests/debian/systemd-stage.sh stages systemd, csfcat and the units), as root, from
 * csf-guest.service; without systemd it skips. The retries wait RESTART_S, not the units' 30 s:
 * a drop-in in /run shortens RestartSec and nothing else.
 */
#include "../t.h"
#include "../tslice.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#define MS 1000000ull
#define SLICES "csfcat-slices.service"
#define MEM "csfcat-mem.service"
#define UNIT_DIR "/usr/lib/systemd/system"
#define SETTINGS "/etc/default/csfcat"
#define TEXTFILE "/run/csf-services"
#define SLICES_PROM TEXTFILE "/csfcat_slices.prom"
#define MEM_PROM TEXTFILE "/csfcat_mem.prom"
#define WARN_US "/sys/module/coarse_stat_fs/parameters/slice_warn_us"
#define MOUNT_POINT "/sys/kernel/coarse_stat_fs"
#define MODULE "/csf/coarse_stat_fs.ko"
/* The test's settings: a threshold other than the default, reports every 2 s. */
#define THRESHOLD_MS 30
#define INTERVAL_S 2
/* RestartSec in the test's drop-in: under systemd's start limit (5 starts in 10 s). */
#define RESTART_S 3
/* Under emulation systemctl and a first DAMON report take seconds. */
#define START_S 60

static bool has_damon;

/* systemctl ARGS, shown with its status and output. */
static int systemctl(const char *args)
{
	char cmd[256], out[4096];
	int rc;

	snprintf(cmd, sizeof(cmd), "systemctl %s 2>&1", args);
	rc = t_run(cmd, out, sizeof(out));
	if (out[0])
		printf("#     %s", out);
	return rc;
}

/* A unit's property as systemctl show prints it, without the newline ("" when it cannot). */
static const char *prop(const char *unit, const char *name)
{
	static char out[4][1024];
	static int next;
	char cmd[256], *v = out[next++ % 4];

	snprintf(cmd, sizeof(cmd), "systemctl show -p %s --value %s 2>/dev/null", name, unit);
	if (t_run_quiet(cmd, v, sizeof(out[0])))
		v[0] = 0;
	v[strcspn(v, "\n")] = 0;
	return v;
}

static long long prop_ll(const char *unit, const char *name)
{
	const char *v = prop(unit, name);

	return *v ? strtoll(v, NULL, 10) : -1;
}

/* Wait until the unit's ActiveState is state (and SubState sub, when not NULL). */
static bool wait_state(const char *unit, const char *state, const char *sub, int seconds)
{
	uint64_t end = mono_ns() + (uint64_t)seconds * 1000 * MS;

	do {
		if (!strcmp(prop(unit, "ActiveState"), state) &&
		    (!sub || !strcmp(prop(unit, "SubState"), sub)))
			return true;
		t_sleep_ns(200 * MS);
	} while (mono_ns() < end);
	printf("#   %s: %s/%s after %d s, not %s%s%s\n", unit, prop(unit, "ActiveState"),
	       prop(unit, "SubState"), seconds, state, sub ? "/" : "", sub ? sub : "");
	return false;
}

/* How many lines the journal holds for the unit: the start of what a check reads next. */
static int journal_mark(const char *unit)
{
	char cmd[256], out[32];

	snprintf(cmd, sizeof(cmd), "journalctl -q --no-pager -o cat -u %s | wc -l", unit);
	return t_run_quiet(cmd, out, sizeof(out)) ? 0 : atoi(out);
}

/* The unit's journal after line mark, in out. */
static void journal_since(const char *unit, int mark, char *out, size_t len)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "journalctl -q --no-pager -o cat -u %s | tail -n +%d", unit,
		 mark + 1);
	t_run_quiet(cmd, out, len);
}

/* Wait until the unit's journal after mark holds text; print it when it does not. */
static bool journal_has(const char *unit, int mark, const char *text, int seconds)
{
	static char out[65536];
	uint64_t end = mono_ns() + (uint64_t)seconds * 1000 * MS;

	do {
		journal_since(unit, mark, out, sizeof(out));
		if (strstr(out, text))
			return true;
		t_sleep_ns(200 * MS);
	} while (mono_ns() < end);
	printf("#   the journal of %s holds no \"%s\"; it says:\n%.3000s\n", unit, text, out);
	return false;
}

/* How many times text occurs in the unit's journal after mark. */
static int journal_count(const char *unit, int mark, const char *text)
{
	static char out[65536];
	int n = 0;

	journal_since(unit, mark, out, sizeof(out));
	for (const char *p = out; (p = strstr(p, text)); p += strlen(text))
		n++;
	return n;
}

/* Set KEY=value in /etc/default/csfcat, where the installed file has the key: 0, or -1. */
static int setting(const char *key, const char *value)
{
	char *text = file_read_all(SETTINGS, NULL), *line, *save = NULL;
	size_t klen = strlen(key);
	bool found = false;
	FILE *f;

	if (!text)
		return -1;
	f = fopen(SETTINGS ".new", "w");
	if (!f) {
		free(text);
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, key, klen) && line[klen] == '=') {
			fprintf(f, "%s=%s\n", key, value);
			found = true;
		} else {
			fprintf(f, "%s\n", line);
		}
	}
	free(text);
	if (fclose(f) || !found || rename(SETTINGS ".new", SETTINGS))
		return -1;
	return 0;
}

static void settings_of_the_test(void)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", THRESHOLD_MS);
	if (setting("CSFCAT_TEXTFILE_DIR", TEXTFILE) || setting("CSFCAT_SLICES_THRESHOLD_MS", v))
		t_die("setting the test's values in " SETTINGS);
	snprintf(v, sizeof(v), "%d", INTERVAL_S);
	if (setting("CSFCAT_MEM_INTERVAL_S", v))
		t_die("setting the test's values in " SETTINGS);
}

/*
 * The drop-ins that shorten RestartSec, there or gone; then systemd reads the units again (only
 * on a change: under emulation a reload takes seconds).
 */
static void drop_ins(bool there)
{
	static const char *const units[] = { SLICES, MEM };
	static bool now;
	char dir[256], path[300];
	FILE *f;

	if (there == now)
		return;
	now = there;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		snprintf(dir, sizeof(dir), "/run/systemd/system/%s.d", units[i]);
		snprintf(path, sizeof(path), "%s/csf-test.conf", dir);
		if (there) {
			mkdir("/run/systemd/system", 0755);
			mkdir(dir, 0755);
			f = fopen(path, "w");
			if (!f || fprintf(f, "[Service]\nRestartSec=%ds\n", RESTART_S) < 0 ||
			    fclose(f))
				t_die("writing %s", path);
		} else {
			unlink(path);
		}
	}
	if (systemctl("daemon-reload"))
		t_die("systemctl daemon-reload");
}

/*
 * What every scenario starts from: both services stopped and not failed, the test's settings,
 * an empty textfile directory, the module loaded and mounted, the watch off. The drop-ins are
 * for the scenarios that wait for retries (drop_ins()).
 */
static void setup(void)
{
	struct timespec up;
	char out[1024];

	/* Where the boot's time goes: this test is most of it. */
	clock_gettime(CLOCK_BOOTTIME, &up);
	printf("#   %.1f s after boot\n", (double)up.tv_sec + (double)up.tv_nsec / 1e9);
	systemctl("stop " SLICES " " MEM);
	/* Quiet: it fails on a unit systemd has not loaded yet. */
	t_run_quiet("systemctl reset-failed " SLICES " " MEM " 2>&1", out, sizeof(out));
	settings_of_the_test();
	if (system("rm -rf " TEXTFILE))
		t_die("rm -rf " TEXTFILE);
	if (access(MOUNT_POINT, F_OK) && system("insmod " MODULE))
		t_die("insmod " MODULE);
	if (system("grep -q ' " MOUNT_POINT " ' /proc/mounts || "
		   "mount -t coarse_stat_fs none " MOUNT_POINT))
		t_die("mount " MOUNT_POINT);
	if (file_write(WARN_US, "0"))
		t_die("writing " WARN_US);
}

/* Start a unit and wait until it runs; false when it does not. */
static bool start(const char *unit)
{
	char args[128];

	snprintf(args, sizeof(args), "start %s", unit);
	systemctl(args);
	return wait_state(unit, "active", "running", START_S);
}

/* Wait until a file exists and holds text. */
static bool file_has(const char *path, const char *text, int seconds)
{
	static char buf[65536];
	uint64_t end = mono_ns() + (uint64_t)seconds * 1000 * MS;

	do {
		if (file_read(path, buf, sizeof(buf)) > 0 && strstr(buf, text))
			return true;
		t_sleep_ns(200 * MS);
	} while (mono_ns() < end);
	printf("#   %s holds no \"%s\" after %d s: \"%.500s\"\n", path, text, seconds, buf);
	return false;
}

static bool damon_stat_on(void)
{
	char v[8] = "";

	return !file_read_value("/sys/module/damon_stat/parameters/enabled", v, sizeof(v)) &&
	       v[0] == 'Y';
}

SCENARIO(installed, "both units load as installed: csfcat in /usr/bin, restarts 30 s apart, but "
		    "not on exit 2 or 5; off until enabled")
{
	static const char *const units[] = { SLICES, MEM };

	/* What systemd made of each unit file: properties and how their values begin. */
	static const char *const want[][2] = {
		{ "LoadState", "loaded" },
		{ "FragmentPath", UNIT_DIR "/csfcat-" },
		{ "ExecStart", "{ path=/usr/bin/csfcat ; argv[]=/usr/bin/csfcat " },
		{ "EnvironmentFiles", SETTINGS " (ignore_errors=yes)" },
		{ "UnitFileState", "disabled" },
		{ "Restart", "on-failure" },
		{ "RestartUSec", "30s\n" },
		{ "RestartPreventExitStatus", "2 5\n" },
	};
	char cmd[512], out[8192];

	setup();
	drop_ins(false);
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		/* One systemctl for all: under emulation each takes a while. */
		snprintf(cmd, sizeof(cmd), "systemctl show %s", units[i]);
		for (size_t p = 0; p < ARRAY_SIZE(want); p++)
			snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " -p %s",
				 want[p][0]);
		/* A newline first, so that every property follows one. */
		out[0] = '\n';
		REQUIRE(t_run_quiet(cmd, out + 1, sizeof(out) - 1) == 0, "%s", cmd);
		printf("#   %s:%s", units[i], out);
		for (size_t p = 0; p < ARRAY_SIZE(want); p++) {
			char key[64];
			const char *v;

			snprintf(key, sizeof(key), "\n%s=", want[p][0]);
			v = strstr(out, key);
			CHECK(v && !strncmp(v + strlen(key), want[p][1], strlen(want[p][1])),
			      "%s: %s does not begin with %s", units[i], want[p][0], want[p][1]);
		}
	}
}

SCENARIO(slices_runs, "csfcat-slices starts and stays up, sets slice_warn_us, writes its file, "
		      "reports a 100 ms slice in the journal")
{
	int mark = journal_mark(SLICES);
	long long pid;
	char tid[32];
	void *err;
	pthread_t th;

	setup();
	REQUIRE(start(SLICES), "csfcat-slices did not start");
	REQUIRE(file_has(SLICES_PROM, "csfcat_long_slices_total{class=\"rt\"} ", START_S),
		"no " SLICES_PROM);
	CHECK(journal_has(SLICES, mark, "following " MOUNT_POINT "/slices (slice_warn_us 30000)",
			  START_S),
	      "no line saying what it follows");
	CHECK_EQ(file_read_ll(WARN_US), THRESHOLD_MS * 1000);
	pid = prop_ll(SLICES, "MainPID");
	pthread_create(&th, NULL, t_fifo_spin_100ms, NULL);
	pthread_join(th, &err);
	REQUIRE(!err, "SCHED_FIFO refused");
	/* The spinning thread's id is not ours to know: its process's and its class are. */
	snprintf(tid, sizeof(tid), "tgid %d (t_services) class rt", getpid());
	CHECK(journal_has(SLICES, mark, tid, START_S), "the 100 ms slice is not in the journal");
	CHECK(file_has(SLICES_PROM, "csfcat_long_slices_total{class=\"rt\"} 1\n", START_S),
	      "the slice is not counted in " SLICES_PROM);
	/* Still the same process, as at the start: no restart in between. */
	t_sleep_ns(2000 * MS);
	CHECK(!strcmp(prop(SLICES, "SubState"), "running"), "SubState %s",
	      prop(SLICES, "SubState"));
	CHECK_EQ(prop_ll(SLICES, "MainPID"), pid);
	CHECK_EQ(prop_ll(SLICES, "NRestarts"), 0);
	systemctl("stop " SLICES);
	CHECK_EQ(file_read_ll(WARN_US), 0);
	CHECK(!strcmp(prop(SLICES, "Result"), "success"), "stopped with Result %s",
	      prop(SLICES, "Result"));
}

SCENARIO(mem_runs, "csfcat-mem starts and stays up and writes its file, from DAMON_STAT or "
		   "from its own kdamond, which it removes when stopped")
{
	const char *source = damon_stat_on() ? "source=\"damon_stat\"" : "source=\"sysfs\"";
	const char *kdamonds = "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds";
	long long pid;

	if (!has_damon)
		SKIP("this kernel has no DAMON: see no_damon");
	setup();
	REQUIRE(start(MEM), "csfcat-mem did not start");
	pid = prop_ll(MEM, "MainPID");
	REQUIRE(file_has(MEM_PROM, "csfcat_memory_idle_seconds{", START_S), "no " MEM_PROM);
	printf("#   DAMON_STAT %s: %s expected\n", damon_stat_on() ? "on" : "off", source);
	CHECK(file_has(MEM_PROM, source, 1), "not %s", source);
	if (!damon_stat_on())
		CHECK_EQ(file_read_ll(kdamonds), 1);
	t_sleep_ns(2000 * MS);
	CHECK(!strcmp(prop(MEM, "SubState"), "running"), "SubState %s", prop(MEM, "SubState"));
	CHECK_EQ(prop_ll(MEM, "MainPID"), pid);
	CHECK_EQ(prop_ll(MEM, "NRestarts"), 0);
	systemctl("stop " MEM);
	CHECK(!strcmp(prop(MEM, "Result"), "success"), "stopped with Result %s",
	      prop(MEM, "Result"));
	if (!damon_stat_on())
		CHECK_EQ(file_read_ll(kdamonds), 0);
}

SCENARIO(restart, "systemctl restart: new processes, the settings read again, slice_warn_us "
		  "put back and set again")
{
	long long slices_pid, mem_pid;
	struct stat before, after;

	setup();
	REQUIRE(start(SLICES), "csfcat-slices did not start");
	slices_pid = prop_ll(SLICES, "MainPID");
	REQUIRE(setting("CSFCAT_SLICES_THRESHOLD_MS", "40") == 0, "setting the threshold");
	CHECK_EQ(systemctl("restart " SLICES), 0);
	CHECK(wait_state(SLICES, "active", "running", START_S), "not running again");
	CHECK(prop_ll(SLICES, "MainPID") != slices_pid, "the same process, %lld", slices_pid);
	/* The value csfcat-slices found when it started is its own predecessor's, put back. */
	CHECK_EQ(file_read_ll(WARN_US), 40000);
	systemctl("stop " SLICES);
	CHECK_EQ(file_read_ll(WARN_US), 0);

	if (!has_damon)
		return;
	REQUIRE(start(MEM), "csfcat-mem did not start");
	mem_pid = prop_ll(MEM, "MainPID");
	REQUIRE(file_has(MEM_PROM, "csfcat_memory_idle_seconds{", START_S), "no " MEM_PROM);
	stat(MEM_PROM, &before);
	CHECK_EQ(systemctl("restart " MEM), 0);
	CHECK(wait_state(MEM, "active", "running", START_S), "not running again");
	CHECK(prop_ll(MEM, "MainPID") != mem_pid, "the same process, %lld", mem_pid);
	/* A report of the new process: the file written again. */
	for (int i = 0; i < START_S * 5; i++) {
		if (!stat(MEM_PROM, &after) && (after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
						after.st_mtim.tv_nsec != before.st_mtim.tv_nsec))
			break;
		t_sleep_ns(200 * MS);
	}
	CHECK(after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
		      after.st_mtim.tv_nsec != before.st_mtim.tv_nsec,
	      "%s not written again after the restart", MEM_PROM);
	systemctl("stop " MEM);
}

SCENARIO(mem_killed, "csfcat-mem killed with SIGKILL is restarted; the new process removes the "
		     "kdamond the old one left, says so, and runs its own")
{
	const char *kdamonds = "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds";
	uint64_t end = mono_ns() + (uint64_t)(RESTART_S + START_S) * 1000 * MS;
	long long pid;
	int mark;

	if (!has_damon)
		SKIP("this kernel has no DAMON: see no_damon");
	if (damon_stat_on())
		SKIP("csfcat-mem reads DAMON_STAT here and runs no kdamond of its own");
	setup();
	drop_ins(true);
	REQUIRE(start(MEM), "csfcat-mem did not start");
	pid = prop_ll(MEM, "MainPID");
	REQUIRE(file_has(MEM_PROM, "csfcat_memory_idle_seconds{", START_S), "no " MEM_PROM);
	mark = journal_mark(MEM);
	systemctl("kill -s KILL " MEM);
	while (prop_ll(MEM, "NRestarts") < 1 && mono_ns() < end)
		t_sleep_ns(200 * MS);
	CHECK_EQ(prop_ll(MEM, "NRestarts"), 1);
	CHECK(wait_state(MEM, "active", "running", START_S), "not running again");
	CHECK(prop_ll(MEM, "MainPID") != pid, "the same process, %lld", pid);
	CHECK(journal_has(MEM, mark, "which an earlier csfcat mem left running when it was killed",
			  START_S),
	      "no line saying the old kdamond was removed");
	CHECK(file_has(MEM_PROM, "csfcat_memory_idle_seconds{", START_S), "no " MEM_PROM);
	CHECK_EQ(file_read_ll(kdamonds), 1);
	systemctl("stop " MEM);
	CHECK(!strcmp(prop(MEM, "Result"), "success"), "stopped with Result %s",
	      prop(MEM, "Result"));
	CHECK_EQ(file_read_ll(kdamonds), 0);
}

/* Wait for csfcat-slices to fail with status; say how many restarts that took. */
static bool failed_with(int status, int seconds)
{
	uint64_t end = mono_ns() + (uint64_t)seconds * 1000 * MS;

	do {
		if (prop_ll(SLICES, "ExecMainStatus") == status &&
		    !strcmp(prop(SLICES, "Result"), "exit-code"))
			return true;
		t_sleep_ns(200 * MS);
	} while (mono_ns() < end);
	printf("#   %s: ExecMainStatus %s, Result %s after %d s, not %d\n", SLICES,
	       prop(SLICES, "ExecMainStatus"), prop(SLICES, "Result"), seconds, status);
	return false;
}

/*
 * Over a wait of seconds, csfcat-slices keeps failing with status, retrying RESTART_S apart (not
 * in a loop, nor given up on), and says why in the journal each time it exits.
 */
static void retries(int status, const char *line, int seconds)
{
	int mark = journal_mark(SLICES), said, exits, other;
	long long n0 = prop_ll(SLICES, "NRestarts"), n;
	uint64_t t0 = mono_ns();
	char exited[64];
	double s;

	t_sleep_ns((uint64_t)seconds * 1000 * MS);
	n = prop_ll(SLICES, "NRestarts") - n0;
	s = (double)(mono_ns() - t0) / 1e9;
	/* A retry may be starting: the last exit is the one before it. */
	CHECK(failed_with(status, RESTART_S + START_S), "it stopped exiting %d", status);
	snprintf(exited, sizeof(exited), "Main process exited, code=exited, status=%d/", status);
	exits = journal_count(SLICES, mark, exited);
	other = journal_count(SLICES, mark, "Main process exited") - exits;
	said = journal_count(SLICES, mark, line);
	printf("#   exit %d: %lld restarts in %.1f s; %d exits with %d, %d other; %d lines \"%s\"\n",
	       status, n, s, exits, status, other, said, line);
	CHECK(!strcmp(prop(SLICES, "ActiveState"), "activating"),
	      "ActiveState %s (Result %s): it gave up", prop(SLICES, "ActiveState"),
	      prop(SLICES, "Result"));
	CHECK(n >= 1 && n <= (long long)(s / RESTART_S) + 1,
	      "%lld restarts in %.1f s, RestartSec=%ds", n, s, RESTART_S);
	CHECK(exits >= 1 && other == 0, "%d exits with %d, %d other", exits, status, other);
	/* The journal takes csfcat's line and systemd's in turn: the last line may trail. */
	CHECK(said == exits || said == exits - 1, "%d lines for %d exits", said, exits);
}

SCENARIO(module_gone, "with the module unloaded, then unmounted, csfcat-slices exits 3, then 4, "
		      "retries RestartSec apart, and runs again once the module is back")
{
	const char *not_loaded = "the coarse_stat_fs module is not loaded";
	const char *not_mounted = "coarse_stat_fs is not mounted";
	int mark, rc = -1;

	setup();
	drop_ins(true);
	REQUIRE(start(SLICES), "csfcat-slices did not start");
	/* The open slices file holds the module: docs/install.md says to stop the service first. */
	CHECK(system("rmmod coarse_stat_fs 2>/dev/null") != 0, "rmmod succeeded under the service");
	CHECK(!strcmp(prop(SLICES, "SubState"), "running"), "SubState %s",
	      prop(SLICES, "SubState"));
	systemctl("stop " SLICES);
	REQUIRE(system("umount " MOUNT_POINT) == 0, "umount " MOUNT_POINT);
	/* The last references go an RCU grace period after the last close. */
	for (int i = 0; i < 20 && rc; i++) {
		rc = system("rmmod coarse_stat_fs 2>/dev/null");
		if (rc)
			t_sleep_ns(100 * MS);
	}
	REQUIRE(rc == 0, "rmmod coarse_stat_fs failed with the service stopped");

	mark = journal_mark(SLICES);
	systemctl("start " SLICES);
	REQUIRE(failed_with(3, START_S), "csfcat-slices did not exit 3");
	CHECK(journal_has(SLICES, mark, not_loaded, START_S), "no line saying why");
	retries(3, not_loaded, 2 * RESTART_S + 1);

	/* Loaded, not mounted. */
	REQUIRE(system("insmod " MODULE) == 0, "insmod " MODULE);
	mark = journal_mark(SLICES);
	CHECK(failed_with(4, START_S), "csfcat-slices did not exit 4");
	CHECK(journal_has(SLICES, mark, not_mounted, START_S), "no line saying why");

	/* Back: the next retry runs, and stays. */
	REQUIRE(system("mount -t coarse_stat_fs none " MOUNT_POINT) == 0, "mount");
	CHECK(wait_state(SLICES, "active", "running", 2 * RESTART_S + START_S),
	      "csfcat-slices did not come back");
	t_sleep_ns(2000 * MS);
	CHECK(!strcmp(prop(SLICES, "SubState"), "running"), "SubState %s",
	      prop(SLICES, "SubState"));
	CHECK_EQ(file_read_ll(WARN_US), THRESHOLD_MS * 1000);
	systemctl("stop " SLICES);
	CHECK_EQ(file_read_ll(WARN_US), 0);
}

/* The unit failed with status, and stayed so past two RestartSec (stays_failed_wait()). */
static void stays_failed(const char *unit, int status, int mark, const char *line)
{
	CHECK(!strcmp(prop(unit, "ActiveState"), "failed"), "%s ActiveState %s", unit,
	      prop(unit, "ActiveState"));
	CHECK_EQ(prop_ll(unit, "ExecMainStatus"), status);
	CHECK_EQ(prop_ll(unit, "NRestarts"), 0);
	CHECK(journal_has(unit, mark, line, START_S), "no line saying why");
	CHECK_EQ(journal_count(unit, mark, line), 1);
}

SCENARIO(refused, "settings csfcat refuses: both services exit 2 and stay stopped, the reason "
		  "in the journal")
{
	int mark_slices = journal_mark(SLICES), mark_mem = journal_mark(MEM);

	setup();
	REQUIRE(setting("CSFCAT_SLICES_THRESHOLD_MS", "0") == 0, "setting the threshold");
	REQUIRE(setting("CSFCAT_MEM_INTERVAL_S", "0") == 0, "setting the interval");
	drop_ins(true);
	systemctl("start " SLICES " " MEM);
	CHECK(wait_state(SLICES, "failed", NULL, START_S), "not failed");
	CHECK(wait_state(MEM, "failed", NULL, START_S), "not failed");
	/* Past two RestartSec: no retry. */
	t_sleep_ns((2 * RESTART_S + 1) * 1000ull * MS);
	stays_failed(SLICES, 2, mark_slices, "--threshold takes ms, from 1 to 60000, not 0");
	stays_failed(MEM, 2, mark_mem, "--watch needs seconds, not 0");
	CHECK_EQ(file_read_ll(WARN_US), 0);
	systemctl("reset-failed " SLICES " " MEM);
}

SCENARIO(no_damon, "on a kernel without DAMON csfcat-mem exits 5 and stays stopped; the journal "
		   "names the option")
{
	int mark = journal_mark(MEM);

	if (has_damon)
		SKIP("this kernel has DAMON");
	setup();
	drop_ins(true);
	systemctl("start " MEM);
	CHECK(wait_state(MEM, "failed", NULL, START_S), "not failed");
	t_sleep_ns((2 * RESTART_S + 1) * 1000ull * MS);
	stays_failed(MEM, 5, mark, "has no DAMON (CONFIG_DAMON is not set)");
	systemctl("reset-failed " MEM);
}

int main(void)
{
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* systemctl and journalctl: /usr/bin from trixie on, /bin on bookworm. */
	setenv("PATH", "/usr/bin:/usr/sbin:/bin:/sbin:/csf/bin", 1);
	if (access("/run/systemd/system", F_OK)) {
		printf("# not under systemd: this test runs in the boot tests/list gives it\n");
		return 4;
	}
	has_damon = !access("/sys/module/damon_stat/parameters/enabled", F_OK) ||
		    !access("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", F_OK);
	rc = t_main("t_services");
	/* As found: the services stopped, the module loaded and mounted for the runner's checks. */
	setup();
	return rc;
}
