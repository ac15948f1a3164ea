// SPDX-License-Identifier: GPL-2.0
/*
 * t_mem_stat: csfcat mem on each kernel's set of DAMON_STAT parameters, copied from what each
 * release offers (tests/fixtures/damon-stat/VERSION/, see its README), through the test-only
 * CSFCAT_MEM_ROOT: what can be printed is, what cannot is said, and every wait has a bound. A
 * host test: runs csfcat from PATH, no kernel, no root. Run from the top of the tree, or with
 * CSF_FIXTURES naming tests/fixtures.
 */
#include "../t.h"
#include "../../tools/json.h"

#include <sys/wait.h>
#include <unistd.h>

/* csfcat's output; the fixture's copy and the fixtures' home, the same for the whole program. */
static char out[65536], root[128], fixtures[128];

/* A fresh copy of fixture VERSION in root, to change as a test needs. */
static void fixture(const char *version)
{
	char cmd[800];

	snprintf(cmd, sizeof(cmd), "rm -rf %s && cp -r %s/damon-stat/%s %s", root, fixtures,
		 version, root);
	if (system(cmd))
		t_die("%s", cmd);
}

static void put(const char *file, const char *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, file);
	if (file_write(path, val))
		t_die("writing %s", path);
}

static void drop(const char *file)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, file);
	if (unlink(path))
		t_die("unlink %s", path);
}

/* csfcat mem ARGS on the fixture, stdout and stderr in out; a hang is a failure, not a hang. */
static int mem(const char *args)
{
	char cmd[800];
	int rc;

	snprintf(cmd, sizeof(cmd), "CSFCAT_MEM_ROOT=%s timeout 60 csfcat mem %s 2>&1", root, args);
	rc = t_run(cmd, out, sizeof(out));
	for (const char *l = out; *l; l += strcspn(l, "\n") + !!l[strcspn(l, "\n")])
		printf("#   | %.*s\n", (int)strcspn(l, "\n"), l);
	return rc;
}

#define HAS(s) CHECK(strstr(out, s), "missing: %s", s)
#define HASNT(s) CHECK(!strstr(out, s), "should not say: %s", s)

SCENARIO(v617_all_printed,
	 "6.17: no aggr_interval_us, no kdamond_pid, accessed bytes 0: all else printed")
{
	bool found;

	fixture("v6.17");
	CHECK_EQ(mem(""), 0);
	HAS("source: DAMON_STAT, the kernel's own monitor (kdamond pid 77)\n");
	/* The kdamond found by its name: its age from /proc. */
	HAS("the biggest System RAM range, as DAMON_STAT covers it), for 100.0 s\n");
	HAS("aggregation interval: not known (this kernel's DAMON_STAT has no "
	    "aggr_interval_us; 6.18 added it)\n");
	HAS("estimated bandwidth: 100.0 MiB/s (one reading");
	HAS("idle time (s; 0: accessed in the last interval; this kernel's DAMON_STAT does "
	    "not say for how long):\n");
	HAS(" p0 0.000  p25 2.000  p50 100.000  p75 100.000  p90 100.000  p99 100.000  p100 "
	    "100.000\n");
	CHECK_EQ(mem("--json --all"), 0);
	CHECK(json_valid_lines(out), "not JSON");
	CHECK(!strstr(out, "aggr_interval_us"), "an interval it does not know");
	CHECK(strstr(out, "\"accessed_negative\":false"), "accessed_negative");
	CHECK(json_find_number(out, "p9", &found) == 0 && found, "p9");
	CHECK(json_find_number(out, "p10", &found) == 2000 && found, "p10");
	CHECK(json_find_number(out, "monitored_ms", &found) == 100000 && found, "monitored_ms");
	CHECK_EQ(mem("--prometheus /tmp/t_mem_stat.prom >/dev/null && cat /tmp/t_mem_stat.prom"),
		 0);
	HASNT("aggregation_interval");
	HAS("csfcat_memory_idle_seconds{source=\"damon_stat\",percentile=\"100\"} 100.000\n");
	HAS("csfcat_memory_monitored_seconds{source=\"damon_stat\"} 100.0\n");
	unlink("/tmp/t_mem_stat.prom");
}

SCENARIO(v617_no_kdamond,
	 "6.17 without a kdamond thread to be found: for how long is said to be unknown")
{
	fixture("v6.17");
	drop("proc/77/comm");
	CHECK_EQ(mem(""), 0);
	HAS("source: DAMON_STAT, the kernel's own monitor (kdamond pid not known)\n");
	HAS("for how long not known (this kernel's DAMON_STAT has no kdamond_pid, and no "
	    "kdamond thread was found)\n");
	HAS("they can also be left from an earlier run of it");
	HASNT("kdamond CPU time");
	CHECK_EQ(mem("--json"), 0);
	CHECK(json_valid_lines(out) && !strstr(out, "monitored_ms"), "monitored_ms");
}

SCENARIO(v617_bounded_wait,
	 "6.17 before its first results, no kdamond: a bounded wait, then the error")
{
	char zeros[256] = "0";
	size_t k = 1;
	uint64_t t0;

	fixture("v6.17");
	drop("proc/77/comm");
	for (int p = 1; p < 101; p++)
		k += (size_t)snprintf(zeros + k, sizeof(zeros) - k, ",0");
	put("sys/module/damon_stat/parameters/memory_idle_ms_percentiles", zeros);
	put("sys/module/damon_stat/parameters/estimated_memory_bandwidth", "0");
	setenv("CSFCAT_MEM_WAIT_S", "2", 1);
	t0 = mono_ns();
	CHECK_EQ(mem(""), 1);
	CHECK((mono_ns() - t0) / 1000000000 < 30, "waited %.1f s", (double)(mono_ns() - t0) / 1e9);
	HAS("waiting for its first, up to 2 s");
	HAS("no results from DAMON_STAT after 2 s of waiting: estimated_memory_bandwidth and "
	    "memory_idle_ms_percentiles");
	HAS("read all 0, and when it started is not known (this kernel's DAMON_STAT has no "
	    "kdamond_pid, and no kdamond thread was found)");
	unsetenv("CSFCAT_MEM_WAIT_S");
}

SCENARIO(v618_interval, "6.18: aggr_interval_us and negative idle times, the kdamond found by name")
{
	bool found;

	fixture("v6.18");
	CHECK_EQ(mem(""), 0);
	HAS("(kdamond pid 77)\n");
	HAS("aggregation interval: 1.000 s (auto-tuned)\n");
	HAS("idle time (s; negative: accessed in the last interval, for that long):\n");
	HAS(" p0 -0.500  p25 2.000  p50 100.000");
	/* 10% accessed of 3 GiB, 50 ms samples: up to 6 GiB/s seen; 100 MiB/s is not near. */
	HAS("estimated bandwidth: 100.0 MiB/s (one reading, from part of an aggregation "
	    "interval: can be far low; --watch 5 gives the largest of 5)\n");
	CHECK_EQ(mem("--json"), 0);
	CHECK(json_find_number(out, "aggr_interval_us", &found) == 1000000 && found, "interval");
	CHECK(strstr(out, "\"bandwidth_trusted\":false"), "trusted");
}

SCENARIO(v73_kdamond_pid,
	 "7.3: kdamond_pid; the guest's 80 MiB/s reading a lower bound, said next to it")
{
	fixture("v7.3");
	CHECK_EQ(mem(""), 0);
	HAS("first to last System RAM, as DAMON_STAT covers it), for 100.0 s\n");
	HAS("aggregation interval: 16.000 s (auto-tuned)\n");
	HAS("estimated bandwidth: 80.0 MiB/s (one reading, from part of an aggregation "
	    "interval: can be far low; --watch 5 gives the largest of 5; at least: DAMON counts "
	    "a byte once per sample (every 800.0 ms), and the accessed bytes were seen in about "
	    "every one)\n");
	HAS("kdamond CPU time: 15.00 ms per s, since it started");
}

SCENARIO(v73_watch_window, "7.3 --watch: a refresh read twice counts once in the window")
{
	fixture("v7.3");
	CHECK_EQ(mem("--watch 0.1 --count 2 --json"), 0);
	CHECK(strstr(out, "\"bandwidth_window_readings\":1,") &&
		      strstr(strchr(out, '\n'), "\"bandwidth_window_readings\":1,"),
	      "window");
	CHECK_EQ(mem("--watch 0.1 --count 1"), 0);
	HAS("(this reading; the largest of the last 1: 80.0 MiB/s, too few yet: can still be "
	    "far low; at least:");
}

SCENARIO(v73_first_results, "7.3 right after a start: waits for the first results, bounded")
{
	fixture("v7.3");
	/* Started 1 s ago, and never older: the wait must end with an error. */
	put("proc/uptime", "901.00 3000.00");
	setenv("CSFCAT_MEM_WAIT_S", "2", 1);
	CHECK_EQ(mem(""), 1);
	unsetenv("CSFCAT_MEM_WAIT_S");
	HAS("DAMON_STAT started 1.0 s ago: waiting for its first results");
	HAS("DAMON_STAT's kdamond (pid 77) still has run for only 1.0 s after 2 s of waiting");
	/* kdamond_pid -1 (not running): not guessed from the threads. */
	fixture("v7.3");
	put("sys/module/damon_stat/parameters/kdamond_pid", "-1");
	CHECK_EQ(mem(""), 0);
	HAS("for how long not known (its kdamond_pid reads no kdamond)");
}

SCENARIO(malformed_percentiles, "a malformed percentiles file is an error that shows it")
{
	fixture("v6.18");
	put("sys/module/damon_stat/parameters/memory_idle_ms_percentiles", "1,2,3");
	CHECK_EQ(mem(""), 1);
	HAS("memory_idle_ms_percentiles: expected 101 values, got: 1,2,3");
}

int main(void)
{
	const char *f = getenv("CSF_FIXTURES");
	char cmd[300];
	int rc;

	snprintf(fixtures, sizeof(fixtures), "%s", f ? f : "tests/fixtures");
	snprintf(root, sizeof(root), "/tmp/t_mem_stat.%d", getpid());
	rc = t_main("t_mem_stat");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		printf("# could not remove %s\n", root);
	return rc;
}
