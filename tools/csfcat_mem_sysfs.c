// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat mem's second source (csfcat_mem.h): our own kdamond, made through DAMON's sysfs
 * interface with DAMON_STAT's settings, on physical memory or on one process (--pid), read
 * through a "stat" scheme that matches every region, and removed on exit. Its intervals are
 * tuned toward DAMON_STAT's goal by the kernel where it can (6.15), else by us between reports
 * (csfcat_mem_tune.c), committed to the running kdamond.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "csfcat.h"
#include "csfcat_mem.h"
#include "util.h"

#define DAMON_ADMIN "/sys/kernel/mm/damon/admin"
#define KDAMONDS DAMON_ADMIN "/kdamonds"
#define KD0 KDAMONDS "/0"
#define CTX0 KD0 "/contexts/0"
#define INTERVALS CTX0 "/monitoring_attrs/intervals"
#define SCHEME0 CTX0 "/schemes/0"
#define TRIED SCHEME0 "/tried_regions"

/* DAMON_STAT's settings (mm/damon/stat.c, damon_stat_build_ctx()), which our kdamond copies. */
#define STAT_SAMPLE_US 5000
#define STAT_AGGR_US 100000
#define STAT_UPDATE_US 60000000
#define STAT_MIN_REGIONS 10
#define STAT_MAX_REGIONS 1000
#define STAT_GOAL_ACCESS_BP 400
#define STAT_GOAL_AGGRS 3
#define STAT_GOAL_MIN_SAMPLE_US 5000
#define STAT_GOAL_MAX_SAMPLE_US 10000000
/* vaddr re-reads the process's mappings this often: DAMON's default, not DAMON_STAT's 60 s. */
#define VADDR_UPDATE_US 1000000
#define DEFAULT_DURATION_S 10.0
/* csfcat's tuning steps: at least this far apart (tune_period_s()). */
#define TUNE_MIN_PERIOD_S 1.0

/* Write a value to one of our kdamond's files; print what failed. */
static int kd_write(const char *path, const char *val)
{
	if (mem_write_file(path, val)) {
		mem_file_error("writing", path);
		return -1;
	}
	return 0;
}

static int kd_write_u64(const char *path, uint64_t v)
{
	char val[24];

	snprintf(val, sizeof(val), "%" PRIu64, v);
	return kd_write(path, val);
}

/*
 * Who runs a kdamond now, in words, or "" when nobody does. The special-purpose modules run
 * exclusively, so no other kdamond starts while one is on; kdamonds made through sysfs by
 * another program (damo, say) are theirs: we would have to rewrite nr_kdamonds, which destroys
 * every kdamond directory, to add ours.
 */
static void kdamond_owner(char *buf, size_t len, bool sysfs)
{
	static const char *const modules[][2] = { { "damon_stat", "DAMON_STAT" },
						  { "damon_reclaim", "DAMON_RECLAIM" },
						  { "damon_lru_sort", "DAMON_LRU_SORT" } };
	char path[128], v[8];
	uint64_t nr;

	buf[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(modules); i++) {
		int64_t pid = -1;

		snprintf(path, sizeof(path), "/sys/module/%s/parameters/enabled", modules[i][0]);
		if (mem_read_file(path, v, sizeof(v)) || (v[0] != 'Y' && v[0] != 'y'))
			continue;
		snprintf(path, sizeof(path), "/sys/module/%s/parameters/kdamond_pid",
			 modules[i][0]);
		mem_read_i64(path, &pid);
		snprintf(buf, len,
			 "%s (kernel module %s, kdamond pid %" PRId64
			 ") runs, and no other kdamond "
			 "can start while it does; it is turned off with\n"
			 "  echo N > /sys/module/%s/parameters/enabled",
			 modules[i][1], modules[i][0], pid, modules[i][0]);
		return;
	}
	if (!sysfs || mem_read_u64(KDAMONDS "/nr_kdamonds", &nr) || !nr)
		return;
	for (uint64_t k = 0; k < nr; k++) {
		char state[16] = "?";
		int64_t pid = -1;

		snprintf(path, sizeof(path), KDAMONDS "/%" PRIu64 "/state", k);
		mem_read_file(path, state, sizeof(state));
		snprintf(path, sizeof(path), KDAMONDS "/%" PRIu64 "/pid", k);
		mem_read_i64(path, &pid);
		if (!strcmp(state, "on")) {
			snprintf(buf, len,
				 "another program (damo, or a csfcat killed with SIGKILL) runs a "
				 "kdamond through DAMON sysfs: " KDAMONDS "/%" PRIu64
				 " (kdamond pid %" PRId64 ")",
				 k, pid);
			return;
		}
	}
	snprintf(buf, len,
		 "another program set up %" PRIu64 " kdamond%s through DAMON sysfs (" KDAMONDS
		 ", not running); csfcat will not destroy them to add its own",
		 nr, nr == 1 ? "" : "s");
}

/* Our kdamond's readings hold whole intervals; only saturation limits them. */
static void sysfs_bandwidth(struct mem_report *m)
{
	m->bw_trusted = !m->met.bandwidth || m->met.saturated_bandwidth * 2 < m->met.bandwidth;
	if (!m->bw_trusted)
		snprintf(m->bw_note, sizeof(m->bw_note),
			 "at least: DAMON counts a byte once per sample (every %.1f ms), and the "
			 "accessed bytes were seen in every one",
			 (double)m->sample_us / 1e3);
}

static struct {
	bool created; /* we wrote nr_kdamonds: teardown must remove it */
	bool tuned; /* the kernel auto-tunes intervals (intervals_goal, 6.15 and later) */
	enum mem_tune tuning; /* who tunes: MEM_TUNE_KERNEL, _CSFCAT or _OFF */
	uint64_t sample_us; /* what we last committed (MEM_TUNE_CSFCAT) */
	double next_tune_s; /* when we tune next (CLOCK_MONOTONIC) */
	pid_t pid;
	double t_on;
} kd;

/* DAMON_STAT's tuning goal (mm/damon/stat.c), which the kernel or csfcat aims at. */
static const struct mem_tune_goal stat_goal = {
	.access_bp = STAT_GOAL_ACCESS_BP,
	.aggrs = STAT_GOAL_AGGRS,
	.min_sample_us = STAT_GOAL_MIN_SAMPLE_US,
	.max_sample_us = STAT_GOAL_MAX_SAMPLE_US,
	.aggr_samples = MEM_STAT_SAMPLES_PER_AGGR,
};

/* Write a command to our kdamond's state file; the file answers EBUSY while another runs. */
static int kd_state(const char *cmd)
{
	for (int i = 0;; i++) {
		if (!mem_write_file(KD0 "/state", cmd))
			return 0;
		if (errno != EBUSY || i >= 3000)
			return -1;
		usleep(10000);
	}
}

static bool kd_running(void)
{
	char state[16];

	return !mem_read_file(KD0 "/state", state, sizeof(state)) && !strcmp(state, "on");
}

/* Stop and remove what we created. Safe to call when we created nothing. */
static int kd_teardown(void)
{
	char state[16] = "", path[PATH_MAX];
	uint64_t nr = 1;

	if (!kd.created)
		return 0;
	if (!mem_read_file(KD0 "/state", state, sizeof(state)) && strcmp(state, "off") != 0 &&
	    kd_state("off"))
		mem_err("stopping our kdamond (" KD0 "/state): %s", strerror(errno));
	for (int i = 0; i < 3000; i++) {
		if (!mem_write_file(KDAMONDS "/nr_kdamonds", "0") ||
		    (errno != EBUSY && errno != EINTR))
			break;
		usleep(10000);
	}
	if (mem_read_u64(KDAMONDS "/nr_kdamonds", &nr) || nr) {
		mem_err("could not remove our kdamond: run\n  echo off > " KD0
			"/state; echo 0 > " KDAMONDS "/nr_kdamonds");
		return -1;
	}
	kd.created = false;
	unlink(mem_at_root(MEM_KD_RECORD, path, sizeof(path)));
	return 0;
}

/*
 * Record our kdamond while it runs. A csfcat mem killed with SIGKILL (systemd's stop timeout, the
 * OOM killer) cannot remove it, and the next csfcat mem, the service restarted, would find it in
 * the way for good. Without /run (a container, say) nothing is recorded and such a kdamond is
 * named as another program's.
 */
static void kd_record(void)
{
	char buf[PATH_MAX], val[64];
	const char *path = mem_at_root(MEM_KD_RECORD, buf, sizeof(buf));
	uint64_t nr = 0;
	ssize_t len;
	int fd;

	mem_read_u64(CTX0 "/schemes/nr_schemes", &nr);
	len = snprintf(val, sizeof(val), "%d %" PRIu64 "\n", kd.pid, nr);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	if (write(fd, val, (size_t)len) != len)
		unlink(path);
	close(fd);
}

/*
 * Remove the kdamond a killed csfcat mem left running: the one kdamond there is, with the pid and
 * the number of schemes it recorded. Called holding the lock that every csfcat mem running a
 * kdamond holds, so the csfcat that made it is gone; any other kdamond is left alone.
 */
static void kd_reclaim(void)
{
	char rec[64], path[PATH_MAX], *end;
	int64_t pid = -1, rec_pid;
	uint64_t nr = 0, rec_nr = 0, nr_schemes = 0;

	if (mem_read_file(MEM_KD_RECORD, rec, sizeof(rec)))
		return;
	errno = 0;
	rec_pid = strtoll(rec, &end, 10);
	if (end != rec && *end == ' ')
		rec_nr = strtoull(end + 1, &end, 10);
	else
		rec_pid = 0;
	if (!errno && !*end && rec_pid > 0 && !mem_read_u64(KDAMONDS "/nr_kdamonds", &nr) &&
	    nr == 1 && kd_running() && !mem_read_i64(KD0 "/pid", &pid) && pid == rec_pid &&
	    !mem_read_u64(CTX0 "/schemes/nr_schemes", &nr_schemes) && nr_schemes == rec_nr) {
		fprintf(stderr, "%s: " MEM_CMD ": removing kdamond %" PRId64 ", which %s\n",
			csfcat_prog, pid, "an earlier csfcat mem left running when it was killed");
		kd.created = true;
		if (kd_teardown())
			return;
	}
	/* Not, or no longer, ours: a record of nothing. */
	unlink(mem_at_root(MEM_KD_RECORD, path, sizeof(path)));
}

/*
 * When csfcat tunes, the time to the next step: aggrs aggregation intervals, as the kernel, but
 * not under TUNE_MIN_PERIOD_S. The kernel's step is a few sums; ours is a sysfs request that
 * waits for an interval, 21 reads and a commit, which took 20 to 30 ms of an emulated CPU: at
 * the kernel's pace while the intervals are short (5 ms sampling, 0.3 s steps), csfcat cost as
 * much CPU as the kdamond it tunes.
 */
static double tune_period_s(uint64_t aggrs)
{
	double s = (double)(aggrs * stat_goal.aggr_samples * kd.sample_us) / 1e6;

	return s > TUNE_MIN_PERIOD_S ? s : TUNE_MIN_PERIOD_S;
}

/*
 * "stat" schemes do nothing but count; their pattern ranges default to 0..0. Scheme 0 matches
 * every region: the reports read its tried regions. For csfcat's tuning, scheme k (1..ge) matches
 * the regions accessed in k samples or more: the bytes each was tried on in one aggregation
 * interval, which the kernel totals without a directory per region, add up to the sum of size
 * times accesses that the tuning's score needs (mem_tune_score_ge()).

 */
static int kd_schemes(unsigned int ge)
{
	char path[160];

	if (kd_write_u64(CTX0 "/schemes/nr_schemes", 1 + ge))
		return -1;
	for (unsigned int k = 0; k <= ge; k++) {
		const char *const files[] = { "action", "access_pattern/sz/max",
					      "access_pattern/nr_accesses/min",
					      "access_pattern/nr_accesses/max",
					      "access_pattern/age/max" };
		const uint64_t values[] = { 0, ULONG_MAX, k, UINT_MAX, UINT_MAX };

		for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
			snprintf(path, sizeof(path), CTX0 "/schemes/%u/%s", k, files[i]);
			if (i ? kd_write_u64(path, values[i]) : kd_write(path, "stat"))
				return -1;
		}
	}
	return 0;
}

/* Our kdamond with DAMON_STAT's settings, on paddr's biggest System RAM range or on --pid. */
/* The --pid process is gone: no /proc entry, or a zombie, whose memory DAMON cannot see. */
static bool process_gone(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (mem_read_file(path, buf, sizeof(buf)))
		return true;
	p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

static int kd_setup(const struct mem_opts *o, struct mem_report *base)
{
	char ops[128];
	const char *want = o->pid ? "vaddr" : "paddr";
	struct mem_ram ram;
	int64_t pid;

	if (kd_write(KD0 "/contexts/nr_contexts", "1"))
		return EXIT_FAILURE;
	if (mem_read_file(CTX0 "/avail_operations", ops, sizeof(ops)))
		return mem_file_error("reading", CTX0 "/avail_operations");
	if (!strstr(ops, want)) {
		mem_err("this kernel's DAMON has no %s operations: CONFIG_DAMON_%s is not set",
			want, o->pid ? "VADDR" : "PADDR");
		return EXIT_NO_DAMON;
	}
	if (kd_write(CTX0 "/operations", want))
		return EXIT_FAILURE;
	kd.tuned = o->tune == MEM_TUNE_AUTO && mem_exists(INTERVALS "/intervals_goal");
	kd.tuning = kd.tuned		    ? MEM_TUNE_KERNEL :
		    o->tune == MEM_TUNE_OFF ? MEM_TUNE_OFF :
					      MEM_TUNE_CSFCAT;
	kd.sample_us = STAT_SAMPLE_US;
	if (kd_write_u64(INTERVALS "/sample_us", STAT_SAMPLE_US) ||
	    kd_write_u64(INTERVALS "/aggr_us", STAT_AGGR_US) ||
	    kd_write_u64(INTERVALS "/update_us", o->pid ? VADDR_UPDATE_US : STAT_UPDATE_US) ||
	    kd_write_u64(CTX0 "/monitoring_attrs/nr_regions/min", STAT_MIN_REGIONS) ||
	    kd_write_u64(CTX0 "/monitoring_attrs/nr_regions/max", STAT_MAX_REGIONS))
		return EXIT_FAILURE;
	if (kd.tuned &&
	    (kd_write_u64(INTERVALS "/intervals_goal/access_bp", STAT_GOAL_ACCESS_BP) ||
	     kd_write_u64(INTERVALS "/intervals_goal/aggrs", STAT_GOAL_AGGRS) ||
	     kd_write_u64(INTERVALS "/intervals_goal/min_sample_us", STAT_GOAL_MIN_SAMPLE_US) ||
	     kd_write_u64(INTERVALS "/intervals_goal/max_sample_us", STAT_GOAL_MAX_SAMPLE_US)))
		return EXIT_FAILURE;
	if (kd_write(CTX0 "/targets/nr_targets", "1"))
		return EXIT_FAILURE;
	if (o->pid) {
		if (kd_write_u64(CTX0 "/targets/0/pid_target", o->pid))
			return EXIT_FAILURE;
	} else {
		/* paddr has no default range through sysfs: DAMON_STAT's is the biggest one. */
		if (mem_system_ram(&ram))
			return mem_file_error("reading", "/proc/iomem");
		if (kd_write(CTX0 "/targets/0/regions/nr_regions", "1") ||
		    kd_write_u64(CTX0 "/targets/0/regions/0/start", ram.big_start) ||
		    kd_write_u64(CTX0 "/targets/0/regions/0/end", ram.big_end))
			return EXIT_FAILURE;
		base->start = ram.big_start;
		base->end = ram.big_end;
		base->bytes = ram.big_end - ram.big_start;
		base->range_note = "the biggest System RAM range";
	}
	if (kd_schemes(kd.tuning == MEM_TUNE_CSFCAT ? MEM_STAT_SAMPLES_PER_AGGR : 0))
		return EXIT_FAILURE;
	if (kd_state("on")) {
		char owner[512];
		int e = errno;

		/* Ours is the only kdamond directory now: only a module can be in the way. */
		kdamond_owner(owner, sizeof(owner), false);
		if (*owner)
			mem_err("cannot start a kdamond: %s", owner);
		else if (o->pid && process_gone(o->pid)) /* while we set up (slow, emulated) */
			mem_err("process %d exited", o->pid);
		else if (o->pid && (e == EINVAL || e == ESRCH))
			mem_err("cannot monitor process %d: %s", o->pid, strerror(e));
		else
			mem_err("starting our kdamond (" KD0 "/state): %s", strerror(e));
		return EXIT_FAILURE;
	}
	kd.t_on = mem_mono_s();
	kd.next_tune_s = kd.t_on + tune_period_s(stat_goal.aggrs);
	if (mem_read_i64(KD0 "/pid", &pid))
		pid = -1;
	kd.pid = (pid_t)pid;
	if (pid > 0)
		kd_record();
	return 0;
}

static int kd_intervals(uint64_t *aggr, uint64_t *sample)
{
	/* The files hold what we wrote until asked for the tuned values. */
	if (kd.tuned && kd_state("update_tuned_intervals"))
		return -1;
	if (mem_read_u64(INTERVALS "/aggr_us", aggr) ||
	    mem_read_u64(INTERVALS "/sample_us", sample))
		return -1;
	return 0;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* The tried regions the last update filled in. */
static int kd_regions(struct mem_region **out, size_t *n)
{
	char rp[PATH_MAX];
	DIR *d = opendir(mem_at_root(TRIED, rp, sizeof(rp)));
	struct dirent *de;
	struct mem_region *r = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[384];

		if (!all_digits(de->d_name))
			continue;
		if (*n == cap) {
			struct mem_region *g = realloc(r, (cap = cap ? 2 * cap : 256) * sizeof(*r));

			if (!g) {
				closedir(d);
				free(r);
				return -1;
			}
			r = g;
		}
		struct mem_region *x = &r[*n];
		const char *fields[] = { "start", "end", "nr_accesses", "age" };
		uint64_t *v[] = { &x->start, &x->end, &x->nr_accesses, &x->age };

		for (size_t i = 0; i < 4; i++) {
			snprintf(path, sizeof(path), TRIED "/%s/%s", de->d_name, fields[i]);
			if (mem_read_u64(path, v[i])) {
				int e = errno;

				closedir(d);
				free(r);
				errno = e;
				return -1;
			}
		}
		if (x->end > x->start)
			(*n)++;
	}
	closedir(d);
	*out = r;
	return 0;
}

/* Say why a read or a write of our kdamond's files failed (errno e): EXIT_FAILURE. */
static int kd_failed(const struct mem_opts *o, const char *what, int e)
{
	if (o->pid && process_gone(o->pid)) {
		mem_err("process %d exited", o->pid);
	} else if (!kd_running()) {
		if (o->pid)
			mem_err("our kdamond stopped: process %d exited", o->pid);
		else
			mem_err("our kdamond stopped unexpectedly");
	} else {
		mem_err("%s: %s", what, strerror(e));
	}
	return EXIT_FAILURE;
}

/*
 * One step of the kernel's interval tuning, done here (MEM_TUNE_CSFCAT): the share of possible
 * access samples the last aggregation interval saw, against the goal, sets the next sampling
 * interval; the aggregation interval stays 20 of them. The kernel then rescales the regions'
 * ages and access counts to the new intervals (damon_update_monitoring_results()). The step
 * reads only the schemes' totals (kd_schemes()): a read of the regions makes the kernel build
 * a sysfs directory for each, which cost csfcat 100 ms of an emulated CPU per step.
 */
static int kd_tune(const struct mem_opts *o)
{
	uint64_t ge[MEM_STAT_SAMPLES_PER_AGGR + 1], next = kd.sample_us;
	char path[160];

	if (kd_state("update_schemes_tried_bytes"))
		return kd_failed(o, "updating our kdamond's schemes to tune it (" KD0 "/state)",
				 errno);
	for (unsigned int k = 0; k < ARRAY_SIZE(ge); k++) {
		snprintf(path, sizeof(path), CTX0 "/schemes/%u/tried_regions/total_bytes", k);
		if (mem_read_u64(path, &ge[k]))
			return kd_failed(o, "reading our kdamond's schemes to tune it", errno);
	}
	/* 6.12 gives nothing when the schemes were not applied in time: tune next time. */
	if (ge[0])
		next = mem_tune_sample_us(kd.sample_us,
					  mem_tune_score_ge(ge, ARRAY_SIZE(ge) - 1,
							    stat_goal.aggr_samples,
							    stat_goal.access_bp),
					  &stat_goal);
	if (next != kd.sample_us) {
		if (kd_write_u64(INTERVALS "/sample_us", next) ||
		    kd_write_u64(INTERVALS "/aggr_us", next * stat_goal.aggr_samples))
			return EXIT_FAILURE;
		if (kd_state("commit"))
			return kd_failed(o, "committing new intervals (" KD0 "/state)", errno);
		kd.sample_us = next;
	}
	/* The kernel tunes every aggrs intervals; the update above waited about one. */
	kd.next_tune_s = mem_mono_s() + tune_period_s(stat_goal.aggrs - 1);
	return 0;
}

/*
 * Sleep s seconds, tuning our kdamond's intervals meanwhile when csfcat tunes them. Returns 0,
 * -1 when a signal asks us to stop, or the exit status of a failed step.
 */
static int kd_sleep(const struct mem_opts *o, double s)
{
	double end = mem_mono_s() + s;

	for (;;) {
		double now = mem_mono_s();
		bool tune = kd.tuning == MEM_TUNE_CSFCAT && kd.next_tune_s < end;
		double until = tune ? kd.next_tune_s : end;
		int rc;

		/*
		 * Sleep even when a step is overdue: a step waits for DAMON, up to two of its
		 * intervals, and when each takes longer than the time to the next, only this
		 * ppoll() lets a stopping signal in.
		 */
		if (!mem_sleep_s(until - now))
			return -1;
		if (!tune)
			return 0;
		rc = kd_tune(o);
		if (rc)
			return rc;
	}
}

/* The regions cover the monitored physical range, no more and no less. */
static bool covers(const struct mem_region *r, size_t n, const struct mem_report *m)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < n; i++) {
		if (r[i].start < m->start || r[i].end > m->end)
			return false;
		bytes += r[i].end - r[i].start;
	}
	return bytes == m->end - m->start;
}

/*
 * One snapshot of our kdamond's regions, turned into the report: 0, -1 when a signal asks us to
 * stop between tries, or the exit status of a failure.
 */
static int kd_read(const struct mem_opts *o, struct mem_report *m)
{
	uint64_t aggr0 = 0, aggr, sample;
	struct mem_region *r = NULL;
	size_t n = 0;
	int tries = 0;

	/*
	 * Take the regions again when the tuner changed the aggregation interval (rescaling the
	 * ages) around the update, and when the update came back without the whole range: 6.12
	 * gives up, with no regions, when the scheme was not applied within two of its intervals
	 * of the request, which a busy machine can delay.
	 */
	for (;;) {
		free(r);
		r = NULL;
		if ((kd.tuned && kd_intervals(&aggr0, &sample)) ||
		    kd_state("update_schemes_tried_regions") || kd_intervals(&aggr, &sample) ||
		    kd_regions(&r, &n)) {
			int e = errno;

			free(r);
			return kd_failed(o, "reading our kdamond's regions (" SCHEME0 ")", e);
		}
		if (o->pid && process_gone(o->pid)) {
			free(r);
			mem_err("process %d exited", o->pid);
			return EXIT_FAILURE;
		}
		if ((!kd.tuned || aggr == aggr0) && n && (o->pid || covers(r, n, m)))
			break;
		if (mem_stopping()) {
			free(r);
			return -1;
		}
		if (++tries >= 10) {
			free(r);
			mem_err("DAMON reported %s regions %d times in a row (" TRIED ")",
				n ? "incomplete" : "no", tries);
			return EXIT_FAILURE;
		}
	}
	m->aggr_us = aggr;
	m->sample_us = sample;
	m->tuned = kd.tuned;
	m->tuning = kd.tuning;
	m->nr_regions = (unsigned int)n;
	m->monitored_s = mem_mono_s() - kd.t_on;
	mem_compute(r, n, aggr, sample, &m->met);
	sysfs_bandwidth(m);
	if (o->pid) {
		/* Sorted by idle time now: find the span and the contiguous ranges by address. */
		uint64_t lo = UINT64_MAX, hi = 0, bytes = 0;

		for (size_t i = 0; i < n; i++) {
			lo = r[i].start < lo ? r[i].start : lo;
			hi = r[i].end > hi ? r[i].end : hi;
			bytes += r[i].end - r[i].start;
		}
		m->nr_ranges = 0;
		for (size_t i = 0; i < n; i++) {
			bool joined = false;

			for (size_t j = 0; j < n && !joined; j++)
				joined = r[j].end == r[i].start;
			m->nr_ranges += !joined;
		}
		m->start = lo;
		m->end = hi;
		m->bytes = bytes;
	}
	free(r);
	return 0;
}

int mem_run_sysfs(const struct mem_opts *o)
{
	struct mem_report base = { 0 }, m;
	char owner[512], path[PATH_MAX];
	struct mem_cpu cpu = { .first = true };
	double first_s;
	long n = 0;
	int lock, rc;

	/* Two csfcat mem at once would race for kdamond 0: one waits for the other's lock. */
	lock = open(mem_at_root(KDAMONDS "/nr_kdamonds", path, sizeof(path)), O_RDONLY | O_CLOEXEC);
	if (lock < 0)
		return mem_file_error("opening", KDAMONDS "/nr_kdamonds");
	if (flock(lock, LOCK_EX | LOCK_NB)) {
		mem_err("another csfcat mem is running its own kdamond; try again when it is done");
		close(lock);
		return EXIT_FAILURE;
	}
	kd_reclaim();
	kdamond_owner(owner, sizeof(owner), true);
	if (*owner) {
		mem_err("cannot start a kdamond: %s", owner);
		close(lock);
		return EXIT_FAILURE;
	}
	if (mem_write_file(KDAMONDS "/nr_kdamonds", "1")) {
		close(lock);
		return mem_file_error("writing", KDAMONDS "/nr_kdamonds");
	}
	kd.created = true;
	base.source = "sysfs";
	base.ops = o->pid ? "vaddr" : "paddr";
	base.target = o->pid;
	base.accessed_negative = true;
	rc = kd_setup(o, &base);
	base.kdamond = kd.pid;
	/* 6.18 resets a region's age when its access rate moves between zero and non-zero. */
	if (!o->pid && !mem_kernel_at_least(6, 18))
		base.note =
			"on this kernel (before 6.18) a region's age survives changes between no "
			"and a low access rate, so an idle time can include time at a low rate";
	cpu.at_s = kd.t_on;
	first_s = o->duration_s ? o->duration_s : o->watch_s ? o->watch_s : DEFAULT_DURATION_S;
	if (!rc)
		rc = kd_sleep(o, first_s);
	while (!rc) {
		m = base;
		rc = kd_read(o, &m);
		if (rc)
			break;
		mem_cpu_cost(&m, &cpu);
		if (!mem_print_report(&m, o)) {
			rc = EXIT_FAILURE;
			break;
		}
		if (!o->watch_s || (o->count && ++n >= o->count))
			break;
		rc = kd_sleep(o, o->watch_s);
	}
	/* A stopping signal is not an error (mem_reraise() dies of it). */
	if (rc < 0)
		rc = 0;
	if (kd_teardown() && !rc)
		rc = EXIT_FAILURE;
	close(lock);
	return rc;
}

bool mem_sysfs_present(void)
{
	return mem_exists(KDAMONDS "/nr_kdamonds");
}
