// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat mem's first source (csfcat_mem.h): DAMON_STAT, the kernel's own monitor, through its
 * module parameters; --enable turns it on and waits for its first results.
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csfcat.h"
#include "csfcat_mem.h"

#define STAT_PARAMS "/sys/module/damon_stat/parameters"
/* DAMON_STAT publishes results 5 s after it starts, then at most every 5 s. */
#define STAT_FIRST_RESULTS_S 6.0

/*
 * DAMON_STAT's parameters by release (mm/damon/stat.c), all read-only but enabled:
 *
 *   6.17         enabled, estimated_memory_bandwidth, memory_idle_ms_percentiles (unsigned:
 *                accessed bytes read 0)
 *   6.18         + aggr_interval_us; the percentiles signed, accessed bytes negative
 *   7.x (7.2)    + kdamond_pid
 *
 * What a kernel lacks is said, not guessed: without aggr_interval_us the interval is unknown;
 * without kdamond_pid the kdamond is the one kdamond thread (DAMON_STAT runs exclusively, so no
 * other can), and when none or several are found, how long it has monitored is unknown.
 */

int mem_stat_state(void)
{
	char buf[8];

	if (!mem_exists(STAT_PARAMS "/enabled"))
		return -1;
	if (mem_read_file(STAT_PARAMS "/enabled", buf, sizeof(buf))) {
		mem_file_error("reading", STAT_PARAMS "/enabled");
		return -2;
	}
	return buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1';
}

/* DAMON_STAT's kdamond, or -1 with why it is not known in *why. */
static pid_t stat_kdamond(const char **why)
{
	char rp[PATH_MAX], path[300], comm[32];
	pid_t found = -1;
	struct dirent *de;
	int64_t pid;
	int nr = 0;
	DIR *d;

	if (mem_exists(STAT_PARAMS "/kdamond_pid")) {
		if (!mem_read_i64(STAT_PARAMS "/kdamond_pid", &pid) && pid > 0)
			return (pid_t)pid;
		*why = "its kdamond_pid reads no kdamond";
		return -1;
	}
	d = opendir(mem_at_root("/proc", rp, sizeof(rp)));
	while (d && (de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (!mem_read_file(path, comm, sizeof(comm)) && !strncmp(comm, "kdamond.", 8)) {
			found = (pid_t)strtol(de->d_name, NULL, 10);
			nr++;
		}
	}
	if (d)
		closedir(d);
	if (nr == 1)
		return found;
	*why = nr ? "this kernel's DAMON_STAT has no kdamond_pid, and several kdamond threads run" :
		    "this kernel's DAMON_STAT has no kdamond_pid, and no kdamond thread was found";
	return -1;
}

static int stat_read(struct mem_report *m)
{
	char buf[4096];
	const char *why = NULL;
	struct mem_ram ram;

	memset(m, 0, sizeof(*m));
	m->source = "damon_stat";
	m->ops = "paddr";
	m->tuned = true;
	m->tuning = MEM_TUNE_KERNEL;
	m->kdamond = stat_kdamond(&why);
	if (mem_read_u64(STAT_PARAMS "/estimated_memory_bandwidth", &m->met.bandwidth))
		return mem_file_error("reading", STAT_PARAMS "/estimated_memory_bandwidth");
	/* aggr_interval_us came with the negative idle times of accessed bytes (6.18). */
	m->accessed_negative = mem_exists(STAT_PARAMS "/aggr_interval_us");
	if (m->accessed_negative && mem_read_u64(STAT_PARAMS "/aggr_interval_us", &m->aggr_us))
		return mem_file_error("reading", STAT_PARAMS "/aggr_interval_us");
	if (mem_read_file(STAT_PARAMS "/memory_idle_ms_percentiles", buf, sizeof(buf)))
		return mem_file_error("reading", STAT_PARAMS "/memory_idle_ms_percentiles");
	if (mem_parse_percentiles(buf, m->met.idle_ms)) {
		mem_err("%s/memory_idle_ms_percentiles: expected %d values, got: %.60s",
			STAT_PARAMS, MEM_NR_PCT, buf);
		return EXIT_FAILURE;
	}
	m->monitored_s = -1;
	if (m->kdamond > 0 && mem_thread_age_s(m->kdamond, &m->monitored_s)) {
		m->monitored_s = -1;
		why = "its kdamond's start time cannot be read";
	}
	m->monitored_note = why;
	if (mem_system_ram(&ram))
		return mem_file_error("reading", "/proc/iomem");
	/*
	 * DAMON_STAT covers the first to the last System RAM range, holes included, since
	 * damon_set_region_system_rams_default() (in Debian's 7.2 and 7.3), and the biggest
	 * range before.
	 */
	if (mem_kernel_at_least(7, 2)) {
		m->start = ram.first;
		m->end = ram.last;
		m->range_note = "first to last System RAM, as DAMON_STAT covers it";
	} else {
		m->start = ram.big_start;
		m->end = ram.big_end;
		m->range_note = "the biggest System RAM range, as DAMON_STAT covers it";
	}
	m->bytes = m->end - m->start;
	m->note =
		m->monitored_s >= 0 ?
			"DAMON_STAT refreshes its results every 5 s" :
			"DAMON_STAT refreshes its results every 5 s; when it started is not known, "
			"so they can also be left from an earlier run of it";
	return 0;
}

/*
 * What DAMON_STAT's bandwidth reading is worth. It computes it whenever 5 s have passed, at
 * whatever sample of the aggregation interval that falls on, from the accesses counted so far
 * in it: one reading can be anywhere between 0 and the interval's figure. --watch keeps the
 * last MEM_BW_WINDOW refreshes and gives the largest: with 5 of them, it is below half of the
 * interval's figure once in 32. And a reading near what DAMON can see at all (see
 * mem_stat_saturated()) is a lower bound, whatever the window.
 */
static void stat_bandwidth(struct mem_report *m, const struct mem_bw_window *w, bool watch)
{
	int acc = mem_accessed_pct(m->met.idle_ms, m->accessed_negative);
	uint64_t bw = watch ? mem_bw_max(w) : m->met.bandwidth;
	bool sat = mem_stat_saturated(bw, m->bytes, acc, m->aggr_us);
	size_t len = sizeof(m->bw_note), k;

	if (watch) {
		m->bw_window_max = bw;
		m->bw_window_n = w->n;
		m->bw_trusted = w->n >= MEM_BW_WINDOW && !sat;
		k = (size_t)snprintf(
			m->bw_note, len, "this reading; the largest of the last %d: %.1f MiB/s%s",
			w->n, (double)bw / 1048576.0,
			w->n < MEM_BW_WINDOW ? ", too few yet: can still be far low" : "");
	} else {
		m->bw_trusted = false;
		k = (size_t)snprintf(
			m->bw_note, len,
			"one reading, from part of an aggregation interval: can be far "
			"low; --watch 5 gives the largest of %d",
			MEM_BW_WINDOW);
	}
	if (sat && k < len)
		snprintf(m->bw_note + k, len - k,
			 "; at least: DAMON counts a byte once per sample (every %.1f ms), and "
			 "the accessed bytes were seen in about every one",
			 (double)m->aggr_us / MEM_STAT_SAMPLES_PER_AGGR / 1e3);
}

int mem_stat_enable(void)
{
	if (mem_write_file(STAT_PARAMS "/enabled", "Y"))
		return mem_file_error("writing", STAT_PARAMS "/enabled");
	fprintf(stderr, "%s: %s: DAMON_STAT enabled\n", csfcat_prog, MEM_CMD);
	return 0;
}

/*
 * Right after it starts, DAMON_STAT's parameters still hold zeros or an older run's results;
 * its first come 5 s after the start. Without its start time, any figure that is not 0 is one.
 */
static bool stat_ready(const struct mem_report *m, double *wait)
{
	if (m->monitored_s >= 0) {
		*wait = STAT_FIRST_RESULTS_S - m->monitored_s + 0.1;
		return m->monitored_s >= STAT_FIRST_RESULTS_S;
	}
	*wait = 1;
	if (m->met.bandwidth)
		return true;
	for (int p = 0; p < MEM_NR_PCT; p++)
		if (m->met.idle_ms[p])
			return true;
	return false;
}

/* For tests: CSFCAT_MEM_WAIT_S bounds the wait for DAMON_STAT's first results (default 30 s). */
static double wait_limit_s(void)
{
	const char *v = getenv("CSFCAT_MEM_WAIT_S");
	double s = v ? strtod(v, NULL) : 0;

	return s > 0 ? s : 30;
}

int mem_run_damon_stat(const struct mem_opts *o)
{
	struct mem_report m;
	struct mem_bw_window w = { 0 };
	struct mem_metrics last = { 0 };
	struct mem_cpu cpu = { .first = true };
	double limit = wait_limit_s(), deadline = mem_mono_s() + limit, wait;
	bool waited = false, have_last = false;
	long n = 0;
	int rc;

	for (;;) {
		rc = stat_read(&m);
		if (rc)
			return rc;
		if (!stat_ready(&m, &wait)) {
			double left = deadline - mem_mono_s();

			if (left <= 0) {
				if (m.monitored_s >= 0)
					mem_err("DAMON_STAT's kdamond (pid %d) still has run for only %.1f "
						"s after %.0f s of waiting, less than the %.0f s its first "
						"results take: it restarts, or /proc/%d/stat is wrong",
						m.kdamond, m.monitored_s, limit,
						STAT_FIRST_RESULTS_S, m.kdamond);
				else
					mem_err("no results from DAMON_STAT after %.0f s of waiting: "
						"estimated_memory_bandwidth and memory_idle_ms_percentiles "
						"(" STAT_PARAMS
						") read all 0, and when it started is not "
						"known (%s)",
						limit, m.monitored_note);
				return EXIT_FAILURE;
			}
			if (!waited) {
				if (m.monitored_s >= 0)
					fprintf(stderr,
						"%s: %s: DAMON_STAT started %.1f s ago: waiting for its "
						"first results\n",
						csfcat_prog, MEM_CMD, m.monitored_s);
				else
					fprintf(stderr,
						"%s: %s: DAMON_STAT has no results yet: waiting for its "
						"first, up to %.0f s\n",
						csfcat_prog, MEM_CMD, limit);
			}
			waited = true;
			if (!mem_sleep_s(wait < left ? wait : left))
				return 0;
			continue;
		}
		/* A new refresh, not one read already, counts in the window. */
		if (!have_last || last.bandwidth != m.met.bandwidth ||
		    memcmp(last.idle_ms, m.met.idle_ms, sizeof(last.idle_ms)) != 0)
			mem_bw_push(&w, m.met.bandwidth);
		last = m.met;
		have_last = true;
		stat_bandwidth(&m, &w, o->watch_s > 0);
		if (m.monitored_s < 0) {
			m.cpu_ms_per_s = -1;
		} else {
			if (cpu.first) {
				cpu.at_s = mem_mono_s() - m.monitored_s;
				cpu.kdamond_ns = 0;
			}
			mem_cpu_cost(&m, &cpu);
		}
		/* Reading DAMON_STAT's parameters costs csfcat next to nothing: not reported. */
		m.self_ms_per_s = -1;
		if (!mem_print_report(&m, o))
			return EXIT_FAILURE;
		if (!o->watch_s || (o->count && ++n >= o->count))
			return 0;
		if (!mem_sleep_s(o->watch_s))
			return 0;
	}
}
