// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat mem: memory idle-time percentiles and estimated bandwidth, the two metrics of the
 * kernel's DAMON_STAT, on every kernel with DAMON. The sources, in order:
 *
 *   DAMON_STAT enabled      read its parameters (/sys/module/damon_stat/parameters)
 *   DAMON_STAT disabled     say so; --enable turns it on and waits for its first results
 *   DAMON sysfs             run our own kdamond with DAMON_STAT's settings, remove it on exit
 *   no DAMON                an error naming the missing kernel option
 *
 * --pid always runs our own kdamond, on the process's virtual address space (vaddr).
 *
 * The metrics are DAMON_STAT's (mm/damon/stat.c): a region's idle time is (age + 1)
 * aggregation intervals if it was not accessed in the last interval, and -(age + 1) if it was;
 * the percentiles walk the regions sorted by idle time, weighted by size; the bandwidth is
 * sum(size * nr_accesses) per aggregation interval. Our kdamond reads its regions through a
 * "stat" scheme that matches every region, whose tried regions the kernel fills on request.
 *
 * Everything here is root-only: DAMON_STAT's parameters are mode 0400 and DAMON's sysfs files
 * 0600.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csfcat.h"
#include "csfcat_mem.h"
#include "prom.h"

/* No DAMON_STAT and no DAMON sysfs: say which option the kernel lacks. */
static int no_damon(void)
{
	char rel[128];
	const char *what;

	mem_kernel_release(rel, sizeof(rel));
	/* Without a config file, DAMON's other built-in modules show that DAMON is there. */
	if (mem_kconfig("CONFIG_DAMON") == 'n' ||
	    (!mem_exists("/sys/module/damon_reclaim") && !mem_exists("/sys/module/damon_lru_sort")))
		what = "has no DAMON (CONFIG_DAMON is not set)";
	else
		what = "has DAMON but neither its sysfs interface nor DAMON_STAT (CONFIG_DAMON_SYSFS "
		       "and CONFIG_DAMON_STAT are not set)";
	mem_err("this kernel (%s) %s, so it cannot monitor memory accesses.\n"
		"csfcat mem needs CONFIG_DAMON_STAT=y (Linux 6.17 and later), or CONFIG_DAMON_SYSFS=y "
		"with\nCONFIG_DAMON_PADDR=y (CONFIG_DAMON_VADDR=y for --pid), as in Debian's 6.12 "
		"and later.",
		rel, what);
	return EXIT_NO_DAMON;
}

/* ---- the command ---- */

static int parse_seconds(const char *arg, const char *opt, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	if (errno || end == arg || *end || !(*v > 0) || *v > 86400 * 365)
		return csfcat_usage_error(MEM_CMD, opt, arg);
	return 0;
}

static int parse_args(int argc, char **argv, struct mem_opts *o)
{
	enum { O_ALL = 1, O_JSON, O_WATCH, O_COUNT, O_DURATION, O_PROM, O_ENABLE, O_PID, O_TUNE };
	static const struct option opts[] = { { "all", no_argument, NULL, O_ALL },
					      { "json", no_argument, NULL, O_JSON },
					      { "watch", required_argument, NULL, O_WATCH },
					      { "count", required_argument, NULL, O_COUNT },
					      { "duration", required_argument, NULL, O_DURATION },
					      { "prometheus", required_argument, NULL, O_PROM },
					      { "enable", no_argument, NULL, O_ENABLE },
					      { "pid", required_argument, NULL, O_PID },
					      { "tune", required_argument, NULL, O_TUNE },
					      { 0 } };
	char *end;
	long v;
	int c;

	memset(o, 0, sizeof(*o));
	optind = 0; /* glibc: reinitialize, main() already parsed */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_ALL:
			o->all = true;
			break;
		case O_JSON:
			o->json = true;
			break;
		case O_WATCH:
			if (parse_seconds(optarg, "--watch needs seconds, not", &o->watch_s))
				return EXIT_USAGE;
			break;
		case O_DURATION:
			if (parse_seconds(optarg, "--duration needs seconds, not", &o->duration_s))
				return EXIT_USAGE;
			break;
		case O_COUNT:
		case O_PID:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v <= 0 || v > INT_MAX)
				return csfcat_usage_error(MEM_CMD,
							  c == O_PID ?
								  "--pid needs a process id, not" :
								  "--count needs a number, not",
							  optarg);
			if (c == O_PID)
				o->pid = (pid_t)v;
			else
				o->count = v;
			break;
		case O_PROM:
			o->prom = optarg;
			break;
		case O_ENABLE:
			o->enable = true;
			break;
		case O_TUNE:
			if (!strcmp(optarg, "auto"))
				o->tune = MEM_TUNE_AUTO;
			else if (!strcmp(optarg, "csfcat"))
				o->tune = MEM_TUNE_CSFCAT;
			else if (!strcmp(optarg, "off"))
				o->tune = MEM_TUNE_OFF;
			else
				return csfcat_usage_error(
					MEM_CMD, "--tune takes auto, csfcat or off, not", optarg);
			break;
		default:
			return csfcat_usage_error(MEM_CMD, "unknown option or missing value",
						  argv[optind - 1]);
		}
	}
	if (optind != argc)
		return csfcat_usage_error(MEM_CMD, "takes no arguments, got", argv[optind]);
	if (o->count && !o->watch_s)
		return csfcat_usage_error(MEM_CMD, "--count goes with --watch", NULL);
	if (o->enable && o->pid)
		return csfcat_usage_error(MEM_CMD,
					  "--enable is for DAMON_STAT, --pid for our own "
					  "kdamond: not both",
					  NULL);
	if (o->enable && o->tune != MEM_TUNE_AUTO)
		return csfcat_usage_error(MEM_CMD,
					  "--enable is for DAMON_STAT, --tune for our own "
					  "kdamond: not both",
					  NULL);
	return 0;
}

static int cmd_mem(int argc, char **argv)
{
	struct mem_opts o;
	char path[64];
	int rc, st;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	if (o.prom && prom_check_dir(MEM_CMD, o.prom))
		return EXIT_FAILURE;
	if (o.pid) {
		snprintf(path, sizeof(path), "/proc/%d", o.pid);
		if (!mem_exists(path)) {
			mem_err("--pid %d: no such process", o.pid);
			return EXIT_FAILURE;
		}
	}
	mem_test_root = getenv("CSFCAT_MEM_ROOT") ?: "";
	mem_catch_signals();
	st = mem_stat_state();
	if (st == -2)
		return EXIT_FAILURE;
	if (o.enable && st < 0) {
		mem_err("--enable: this kernel has no DAMON_STAT (CONFIG_DAMON_STAT is not set)");
		return EXIT_NO_DAMON;
	}
	if (o.enable && !st) {
		rc = mem_stat_enable();
		if (rc)
			return rc;
		st = 1;
	}
	if (st == 1 && !o.pid && o.tune != MEM_TUNE_AUTO) {
		mem_err("--tune is for our own kdamond, and DAMON_STAT runs: turn it off first "
			"(echo N > /sys/module/damon_stat/parameters/enabled)");
		return EXIT_FAILURE;
	}
	if (st == 1 && !o.pid) {
		rc = mem_run_damon_stat(&o);
	} else if (!mem_sysfs_present()) {
		return no_damon();
	} else {
		if (st == 0)
			fprintf(stderr,
				"%s: %s: DAMON_STAT is built in but disabled (csfcat mem --enable "
				"turns it on); running our own kdamond instead\n",
				csfcat_prog, MEM_CMD);
		rc = mem_run_sysfs(&o);
	}
	mem_reraise();
	return rc;
}

const struct csfcat_cmd csfcat_cmd_mem = {
	.name = "mem",
	.args = "[--all] [--json] [--watch S [--count N]] [--duration S] [--prometheus FILE]\n"
		"      [--enable] [--pid PID] [--tune auto|csfcat|off]",
	.help = "memory idle-time percentiles and estimated bandwidth, from DAMON: DAMON_STAT's\n"
		"when it runs, else our own kdamond through DAMON sysfs for --duration seconds\n"
		"(default 10), removed on exit; --all: p0..p100; --watch: every S seconds;\n"
		"--prometheus: also write FILE for node_exporter; --enable: turn DAMON_STAT on;\n"
		"--pid: one process's virtual memory (root; no module needed); --tune: who tunes\n"
		"our kdamond's intervals (auto: the kernel from 6.15, else csfcat)",
	.run = cmd_mem,
};
