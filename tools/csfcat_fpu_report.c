// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat fpu-report: the latency table of a trace log of the x86_fpu_latency_* events
 * (csfcat_fpu_log.c reads it), or --compare (csfcat_fpu_compare.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csfcat.h"
#include "csfcat_fpu.h"

static volatile sig_atomic_t fpu_stop;

static void fpu_on_signal(int sig)
{
	(void)sig;
	fpu_stop = 1;
}

static void fpu_print_report(const struct fpu_table *t)
{
	printf("# %s: %" PRIu64 " lines, %" PRIu64 " events in %zu rows, %" PRIu64
	       " malformed lines skipped; latency in ns, as the events give it\n",
	       t->source, t->lines, t->events, t->nrows, t->malformed);
	fpu_print_rows(t);
}

static void fpu_json_report(const struct fpu_table *t)
{
	json_begin(NULL);
	json_str("kind", "fpu-report");
	json_str("source", t->source);
	json_u64("lines", t->lines);
	json_u64("events", t->events);
	json_u64("malformed", t->malformed);
	json_str("unit", t->unit);
	fpu_json_rows(t);
	json_end();
	json_flush();
}

static int cmd_fpu_report(int argc, char **argv)
{
	static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
					      { "compare", no_argument, NULL, 'c' },
					      { 0 } };
	struct fpu_table t = { .kind = "fpu-report", .unit = "ns" };
	bool json = false, compare = false;
	const char *path = "-";
	struct sigaction sa = { .sa_handler = fpu_on_signal };
	struct fpu_log *log;
	int c, fd = 0;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'c')
			compare = true;
		else
			return csfcat_usage_error("fpu-report", "unknown option", argv[optind - 1]);
	}
	if (compare) {
		if (argc - optind != 2)
			return csfcat_usage_error("fpu-report", "--compare takes two JSON files",
						  NULL);
		return fpu_compare(argv[optind], argv[optind + 1], json);
	}
	if (argc - optind > 1)
		return csfcat_usage_error("fpu-report", "takes one log at most", NULL);
	if (optind < argc)
		path = argv[optind];
	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "%s: fpu-report: %s: %s\n", csfcat_prog, path,
				strerror(errno));
			return EXIT_FAILURE;
		}
	}
	/* Reading trace_pipe never ends: Ctrl-C (or SIGTERM) ends the reading, not the report. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	log = fpu_log_new();
	if (!log || fpu_log_read(log, fd, &fpu_stop)) {
		fprintf(stderr, "%s: fpu-report: %s: %s\n", csfcat_prog, path, strerror(errno));
		fpu_log_free(log);
		return EXIT_FAILURE;
	}
	if (fd)
		close(fd);
	snprintf(t.source, sizeof(t.source), "%s", strcmp(path, "-") ? path : "stdin");
	fpu_log_counts(log, &t.lines, &t.events, &t.malformed);
	t.rows = fpu_log_rows(log, &t.nrows);
	fpu_log_free(log);
	if (!t.rows) {
		fprintf(stderr, "%s: fpu-report: %s\n", csfcat_prog, strerror(ENOMEM));
		return EXIT_FAILURE;
	}
	if (json)
		fpu_json_report(&t);
	else
		fpu_print_report(&t);
	free(t.rows);
	return 0;
}

const struct csfcat_cmd csfcat_cmd_fpu_report = {
	.name = "fpu-report",
	.args = "[FILE|-] [--json] | --compare A.json B.json [--json]",
	.help = "the latency table of a trace log of the x86_fpu_latency_* events (trace_pipe or\n"
		"trace-cmd report), as the series' script prints it, plus p50, p99 and the\n"
		"unit; --compare: two --json outputs side by side, with ratios",
	.run = cmd_fpu_report,
};
