/* SPDX-License-Identifier: GPL-2.0 */
/*
 * csfcat mem: what its files share.
 *
 *   csfcat_mem.c          the command: its options, and the source it takes
 *   csfcat_mem_stat.c     the first source: DAMON_STAT, the kernel's own monitor
 *   csfcat_mem_sysfs.c    the second: our own kdamond, through DAMON's sysfs interface
 *   csfcat_mem_metrics.c  DAMON_STAT's metrics, computed from our kdamond's regions
 *   csfcat_mem_tune.c     DAMON's interval auto-tuning, for kernels that cannot tune (6.12)
 *   csfcat_mem_output.c   the reports: text, JSON, Prometheus
 *   csfcat_mem_files.c    the files they read and write (sysfs, procfs), under a test root
 *   csfcat_mem_signals.c  the stopping signals, and the sleep between reports
 *
 * First the metrics: DAMON_STAT's two figures computed from DAMON regions, how far a bandwidth
 * reading can be trusted, and the parsing of DAMON_STAT's percentiles. No files, no output:
 * csfcat and the host test tests/user/t_mem_metrics.c link the same code.
 */
#ifndef CSFCAT_MEM_H
#define CSFCAT_MEM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "csfcat.h"

#define MEM_NR_PCT 101
/* DAMON_STAT's aggregation interval is 20 sampling intervals, a ratio its tuner keeps. */
#define MEM_STAT_SAMPLES_PER_AGGR 20
/*
 * Our kdamond's pid and number of schemes while it runs, so that the next csfcat mem removes it
 * if we are killed (csfcat_mem_sysfs.c: kd_record(), kd_reclaim()).
 */
#define MEM_KD_RECORD "/run/csfcat-mem.kdamond"
/* --watch judges DAMON_STAT's bandwidth by the largest of this many of its refreshes. */
#define MEM_BW_WINDOW 5

struct mem_region {
	uint64_t start, end;
	uint64_t nr_accesses, age;
};

struct mem_metrics {
	uint64_t bandwidth; /* bytes per second */
	int64_t idle_ms[MEM_NR_PCT];
	uint64_t accessed_bytes; /* in regions accessed in the last interval */
	/* The bandwidth's part from regions accessed in every sample: DAMON cannot see more. */
	uint64_t saturated_bandwidth;
};

/*
 * DAMON_STAT's metrics of regions r[0..n) (sorted by idle time in place): a region's idle time
 * is (age + 1) aggregation intervals, negative when it was accessed in the last one; percentile
 * p is the idle time of the region at which the bytes walked in idle-time order reach p% of all;
 * the bandwidth is sum(size * nr_accesses) per aggregation interval. sample_us 0: not known (no
 * saturated part).
 */
void mem_compute(struct mem_region *r, size_t n, uint64_t aggr_us, uint64_t sample_us,
		 struct mem_metrics *m);

/*
 * DAMON_STAT's memory_idle_ms_percentiles: 101 comma-separated integers. Returns 0, or -1 when
 * there are not 101 of them.
 */
int mem_parse_percentiles(const char *buf, int64_t *idle_ms);

/*
 * The share (0..100) of the monitored bytes accessed in the last interval, from the
 * percentiles: those below 0, or at 0 where the kernel writes accessed bytes as 0 (6.17).
 */
int mem_accessed_pct(const int64_t *idle_ms, bool accessed_negative);

/*
 * Whether a DAMON_STAT bandwidth reading bw is at least half of what DAMON can see: each byte
 * counts once per sampling interval (aggr_us / 20), so a loop faster than that reads as the
 * accessed bytes per sampling interval, however fast it runs. Then the reading is a lower bound.
 */
bool mem_stat_saturated(uint64_t bw, uint64_t bytes, int accessed_pct, uint64_t aggr_us);

/* The last MEM_BW_WINDOW bandwidth readings, each a different refresh. */
struct mem_bw_window {
	uint64_t v[MEM_BW_WINDOW];
	int n, next;
};

void mem_bw_push(struct mem_bw_window *w, uint64_t bw);
uint64_t mem_bw_max(const struct mem_bw_window *w);

/*
 * DAMON's monitoring intervals auto-tuning (6.15), for our kdamond on kernels without it: the
 * goal DAMON_STAT sets, a share of the possible access samples that should be seen accessed,
 * and the bounds of the sampling interval. The aggregation interval stays aggr_samples of them.
 */
struct mem_tune_goal {
	uint64_t access_bp, aggrs, min_sample_us, max_sample_us, aggr_samples;
};

/*
 * How far the regions' accesses in one aggregation interval are from the goal, in basis points
 * of it (10000: on the goal): the kernel's damon_get_intervals_score().
 */
uint64_t mem_tune_score_bp(const struct mem_region *r, size_t n, uint64_t aggr_samples,
			   uint64_t goal_bp);
/*
 * The same score from totals: ge[0] the bytes of all regions, ge[k] (k = 1..max_k, max_k at
 * least aggr_samples) the bytes of the regions accessed in k samples or more.
 */
uint64_t mem_tune_score_ge(const uint64_t *ge, size_t max_k, uint64_t aggr_samples,
			   uint64_t goal_bp);
/* The next sampling interval for that score: the kernel's kdamond_tune_intervals(). */
uint64_t mem_tune_sample_us(uint64_t sample_us, uint64_t score_bp,
			    const struct mem_tune_goal *goal);

/* ---- what the command's files share ---- */

#define MEM_CMD "mem"
/* "csfcat: mem: MESSAGE" on stderr. A macro: clang-tidy 14 misreads va_list across files. */
#define mem_err(fmt, ...) fprintf(stderr, "%s: " MEM_CMD ": " fmt "\n", csfcat_prog, ##__VA_ARGS__)

/* The exit status when the kernel lacks what csfcat mem needs. */
enum { EXIT_NO_DAMON = EXIT_UNSUPPORTED };

/* --tune: who tunes our kdamond's intervals. */
enum mem_tune {
	MEM_TUNE_AUTO, /* the kernel where it can (6.15), else csfcat */
	MEM_TUNE_KERNEL, /* not an option: what auto found */
	MEM_TUNE_CSFCAT, /* csfcat, even where the kernel could (to compare the two) */
	MEM_TUNE_OFF, /* DAMON_STAT's starting intervals for good: 5 ms sampling, 100 ms */
};

struct mem_opts {
	bool all, json, enable;
	enum mem_tune tune;
	double watch_s, duration_s; /* 0: not given */
	long count; /* reports before exiting; 0: no limit */
	const char *prom;
	pid_t pid;
};

/* One report: what was monitored, how, and the two metrics. */
struct mem_report {
	const char *source; /* "damon_stat" or "sysfs" */
	const char *ops; /* "paddr" or "vaddr" */
	pid_t kdamond; /* -1: unknown */
	pid_t target; /* --pid, else 0 */
	uint64_t start, end; /* lowest and highest monitored address */
	uint64_t bytes; /* monitored bytes */
	unsigned int nr_ranges; /* contiguous ranges (vaddr) */
	unsigned int nr_regions; /* DAMON regions, 0: not known (DAMON_STAT does not say) */
	const char *range_note;
	double monitored_s; /* < 0: not known */
	const char *monitored_note; /* why not known, or how it was found */
	uint64_t aggr_us, sample_us; /* 0: not known */
	bool tuned; /* the kernel tunes the intervals */
	enum mem_tune tuning; /* who does: MEM_TUNE_KERNEL, _CSFCAT or _OFF (DAMON_STAT: kernel) */
	bool accessed_negative; /* accessed bytes have negative idle times (not on 6.17) */
	struct mem_metrics met;
	bool bw_trusted; /* the bandwidth reading can be taken as it is */
	char bw_note[256]; /* why not, next to the figure */
	uint64_t bw_window_max; /* --watch on DAMON_STAT: the largest of the last readings */
	int bw_window_n; /* how many; 0: no window */
	double cpu_ms_per_s; /* the kdamond's CPU time per second; < 0: not known */
	double cpu_window_s; /* over this long */
	bool cpu_since_start; /* the window is the kdamond's whole life */
	double self_ms_per_s; /* csfcat's own CPU time per second, same window; < 0: not known */
	const char *note;
};

/* ---- csfcat_mem_files.c ---- */

/*
 * For tests only: CSFCAT_MEM_ROOT=DIR makes csfcat mem read and write DIR/sys/... and
 * DIR/proc/... (and DIR/boot/...) instead, so that tests/user/t_mem_stat.c runs it, natively and
 * without root, on copies of each kernel's DAMON_STAT parameters (tests/fixtures/damon-stat/).
 * "" when not set.
 */
extern const char *mem_test_root;
/* PATH under the test root, in buf. */
const char *mem_at_root(const char *path, char *buf, size_t len);
/* Read a small file (under the test root), without its trailing newline: 0, or -1 with errno. */
int mem_read_file(const char *path, char *buf, size_t len);
/* A number from sysfs, unsigned or signed (a pid, -1 for none): 0, or -1 with errno. */
int mem_read_u64(const char *path, uint64_t *v);
int mem_read_i64(const char *path, int64_t *v);
/* Write a file (under the test root): 0, or -1 with errno. */
int mem_write_file(const char *path, const char *val);
bool mem_exists(const char *path);
/*
 * Explain a failed read or write of a DAMON file (errno; EACCES is the common one):
 * EXIT_FAILURE.
 */
int mem_file_error(const char *what, const char *path);
/* How long a thread has lived, from its start time (proc(5) field 22) and the uptime. */
int mem_thread_age_s(pid_t pid, double *age);
/* The CPU time csfcat and its kdamond took since the previous report (or the start). */
struct mem_cpu {
	uint64_t kdamond_ns, self_ns;
	double at_s;
	bool first;
};

/* Fill in the kdamond's and csfcat's CPU time since the previous report (or its start). */
void mem_cpu_cost(struct mem_report *m, struct mem_cpu *prev);

/*
 * The System RAM ranges of /proc/iomem (top level, as walk_system_ram_res() sees them): the
 * first start, the last end (exclusive), and the biggest range.
 */
struct mem_ram {
	uint64_t first, last, big_start, big_end;
};

int mem_system_ram(struct mem_ram *r);
/* The running kernel's release (the test root's, under CSFCAT_MEM_ROOT). */
void mem_kernel_release(char *buf, size_t len);
/* The running kernel (the test root's) is at least MAJOR.MINOR: for behaviour only. */
bool mem_kernel_at_least(long major, long minor);
/* CONFIG_NAME's value in the running kernel's config file, if one can be read: y, m, n or ?. */
char mem_kconfig(const char *name);

/* ---- csfcat_mem_sysfs.c ---- */

/* Whether this kernel has DAMON's sysfs interface. */
bool mem_sysfs_present(void);
/* Run our own kdamond for --duration, report, and remove it; the exit status. */
int mem_run_sysfs(const struct mem_opts *o);

/* ---- csfcat_mem_stat.c ---- */

/* DAMON_STAT's state: -1 not built in, 0 disabled, 1 enabled; -2 on an error (printed). */
int mem_stat_state(void);
/* Turn DAMON_STAT on (--enable): 0, or the exit status, the error printed. */
int mem_stat_enable(void);
/* Report DAMON_STAT's figures, once or --watch; the exit status. */
int mem_run_damon_stat(const struct mem_opts *o);

/* ---- csfcat_mem_output.c ---- */

/* Print and write one report; false when writing failed (a closed pipe, a full disk). */
bool mem_print_report(const struct mem_report *m, const struct mem_opts *o);

/* ---- csfcat_mem_signals.c ---- */

/* The stopping signal that arrived (SIGINT, SIGTERM, SIGHUP, SIGQUIT), 0 while none has. */
extern volatile sig_atomic_t mem_stop_sig;
/* Block the stopping signals everywhere but in mem_sleep_s(), and ignore SIGPIPE. */
void mem_catch_signals(void);
/*
 * Sleep s seconds with the stopping signals unblocked, and only then: they stay blocked
 * everywhere else, so that one arriving during a sysfs write waits for it, and none is lost
 * between a check of mem_stop_sig and the sleep. Returns false when a signal asks us to stop.
 */
bool mem_sleep_s(double s);
/* Whether a stopping signal has come, delivering one that waits: mem_sleep_s(0). */
bool mem_stopping(void);
/* Die of the signal that stopped us, once everything is cleaned up, as an unhandled one would. */
void mem_reraise(void);
/* CLOCK_MONOTONIC in seconds. */
double mem_mono_s(void);

#endif /* CSFCAT_MEM_H */
