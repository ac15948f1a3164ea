// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat fpu: the module's calibrated XSAVE/XRSTOR latency table (the fpu file).
 * csfcat fpu-report: the same table from trace logs of the x86_fpu_latency_* events, and
 * --compare: two tables (JSON from either command) side by side with ratios.
 *
 * The tables have the columns of the unmerged series' script (xsave-latency-trace.sh), laid out
 * as its sqlite3 -column output, then p50, p99 and the unit. csfcat-fpu-log.c reads logs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../lib/coarse_stat_fs.h"
#include "csfcat.h"
#include "csfcat-fpu.h"
#include "util.h"

#define FPU_PATH CSF_MOUNT_POINT "/" CSF_FPU_FILE

/* A table and what says where it comes from; every field may be empty in a JSON input. */
struct fpu_table {
	char kind[16]; /* "fpu" or "fpu-report" */
	char unit[8];
	char date[32];
	char source[256]; /* fpu-report: the log */
	char vendor[16], cpu_model[96], microcode[24], kernel[160];
	int64_t cpu, family, model, stepping;
	uint64_t tsc_khz;
	bool tsc_invariant;
	char xcr0[24], task[24], xfd[24], measured[24];
	char variants[96], kernel_save[12], kernel_restore[12], xrstor_format[12];
	uint64_t samples;
	uint64_t timer_p50, timer_min, timer_p99;
	bool migrated;
	/* the live-probe method measuring the kernel's save instruction (csfcat fpu) */
	bool check;
	int64_t check_error; /* when not measured */
	char check_op[12], check_rfbm[24];
	uint64_t check_n, check_p50, check_p99, check_direct_p50, check_direct_p99;
	uint64_t check_ov_p50, check_ov_p99;
	bool check_ftrace;
	/* fpu-report */
	uint64_t lines, events, malformed;
	struct fpu_row *rows;
	size_t nrows;
};

static char *hex64(char *buf, size_t len, uint64_t v)
{
	snprintf(buf, len, "0x%" PRIx64, v);
	return buf;
}

/* ---- Tables laid out as sqlite3 -column lays out the series' table ---- */

#define MAX_COLS 16
#define CELL 48 /* the longest: an event name (31), a space and a state (11) */

/* Fills the cells of row r (r == -1: the heads). */
typedef void (*cells_fn)(const void *ctx, long r, char c[MAX_COLS][CELL]);

/* Columns as wide as their widest cell, two spaces apart, a line of dashes under the heads. */
static void print_table(int ncols, size_t nrows, cells_fn fn, const void *ctx)
{
	size_t w[MAX_COLS] = { 0 };
	char c[MAX_COLS][CELL];

	for (long r = -1; r < (long)nrows; r++) {
		fn(ctx, r, c);
		for (int i = 0; i < ncols; i++)
			if (strlen(c[i]) > w[i])
				w[i] = strlen(c[i]);
	}
	for (long r = -2; r < (long)nrows; r++) {
		if (r == -2) {
			fn(ctx, -1, c);
		} else if (r == -1) {
			for (int i = 0; i < ncols; i++) {
				memset(c[i], '-', w[i]);
				c[i][w[i]] = 0;
			}
		} else {
			fn(ctx, r, c);
		}
		for (int i = 0; i < ncols - 1; i++)
			printf("%-*s  ", (int)w[i], c[i]);
		printf("%s\n", c[ncols - 1]);
	}
}

#define FPU_COLS 12 /* csfcat fpu has a state column after XINUSE; fpu-report does not */

static const char *const fpu_heads[FPU_COLS] = { "EVENTs",	 "RFBM",    "XINUSE",  "state",
						 "CNT",		 "lat_min", "lat_max", "lat_avg",
						 "lat_avg(97%)", "p50",	    "p99",     "unit" };

static void fpu_cells(const void *ctx, long i, char c[MAX_COLS][CELL])
{
	const struct fpu_table *t = ctx;
	const struct fpu_row *r = &t->rows[i < 0 ? 0 : i];
	int k = 0;

	if (i < 0) {
		for (int h = 0; h < FPU_COLS; h++)
			if (h != 3 || !strcmp(t->kind, "fpu"))
				snprintf(c[k++], CELL, "%s", fpu_heads[h]);
		return;
	}
	snprintf(c[k++], CELL, "%s%s", r->event, r->kernel ? "*" : "");
	hex64(c[k++], CELL, r->rfbm);
	hex64(c[k++], CELL, r->xinuse);
	if (!strcmp(t->kind, "fpu"))
		snprintf(c[k++], CELL, "%s", r->state);
	snprintf(c[k++], CELL, "%" PRIu64, r->cnt);
	snprintf(c[k++], CELL, "%" PRIu64, r->min);
	snprintf(c[k++], CELL, "%" PRIu64, r->max);
	snprintf(c[k++], CELL, "%" PRIu64, r->avg);
	snprintf(c[k++], CELL, "%" PRIu64, r->avg97);
	snprintf(c[k++], CELL, "%" PRIu64, r->p50);
	snprintf(c[k++], CELL, "%" PRIu64, r->p99);
	snprintf(c[k++], CELL, "%s", t->unit);
}

static void fpu_print_rows(const struct fpu_table *t)
{
	print_table(strcmp(t->kind, "fpu") ? FPU_COLS - 1 : FPU_COLS, t->nrows, fpu_cells, t);
}

static void fpu_json_rows(const struct fpu_table *t)
{
	char hex[24];

	json_begin_array("rows");
	for (size_t i = 0; i < t->nrows; i++) {
		const struct fpu_row *r = &t->rows[i];

		json_begin(NULL);
		json_str("event", r->event);
		if (!strcmp(t->kind, "fpu")) {
			json_bool("kernel", r->kernel);
			json_str("state", r->state);
		}
		json_str("rfbm", hex64(hex, sizeof(hex), r->rfbm));
		json_str("xinuse", hex64(hex, sizeof(hex), r->xinuse));
		json_u64("cnt", r->cnt);
		json_u64("min", r->min);
		json_u64("max", r->max);
		json_u64("avg", r->avg);
		json_u64("avg97", r->avg97);
		json_u64("p50", r->p50);
		json_u64("p99", r->p99);
		json_end();
	}
	json_end_array();
}

/* ---- csfcat fpu ---- */

/* The next blank-separated word of *p, or "" at the end. */
static char *word(char **p)
{
	char *w = strsep(p, " ");

	return w ? w : "";
}

/* The next word as a number in base 10 or 16; false if it is not one. */
static bool number(char **p, int base, uint64_t *v)
{
	char *w = word(p), *end;

	errno = 0;
	*v = strtoull(w, &end, base);
	return *w && !*end && !errno;
}

static bool numbers(char **p, int base, int n, uint64_t **v)
{
	for (int i = 0; i < n; i++)
		if (!number(p, base, v[i]))
			return false;
	return true;
}

static void copy_word(char **p, char *buf, size_t len)
{
	snprintf(buf, len, "%s", word(p));
}

/* "row XSAVE 1 0x3 init 0x3 n min max sum n97 sum97 p50 p99 clamped" */
static int fpu_parse_row(char *v, struct fpu_row *r)
{
	struct fpu_sums s;
	uint64_t kernel, sum, sum97, clamped;
	uint64_t *dec[] = { &s.n, &s.min, &s.max, &sum, &s.n97, &sum97, &s.p50, &s.p99, &clamped };

	memset(r, 0, sizeof(*r));
	copy_word(&v, r->event, sizeof(r->event));
	if (!number(&v, 10, &kernel) || !number(&v, 16, &r->rfbm))
		return -1;
	copy_word(&v, r->state, sizeof(r->state));
	if (!number(&v, 16, &r->xinuse) || !numbers(&v, 10, 9, dec) || !s.n || !s.n97)
		return -1;
	s.sum = sum;
	s.sum97 = sum97;
	r->kernel = kernel;
	fpu_row_set(r, &s);
	return 0;
}

/* "check OP RFBM n p50 p99 direct_p50 direct_p99 cost_p50 cost_p99 ftrace" */
static void fpu_parse_check(char *v, struct fpu_table *t)
{
	uint64_t ftrace = 0;
	uint64_t *dec[] = { &t->check_n,	  &t->check_p50,
			    &t->check_p99,	  &t->check_direct_p50,
			    &t->check_direct_p99, &t->check_ov_p50,
			    &t->check_ov_p99,	  &ftrace };

	if (!strncmp(v, "unavailable ", 12)) {
		t->check_error = strtoll(v + 12, NULL, 10);
		return;
	}
	copy_word(&v, t->check_op, sizeof(t->check_op));
	copy_word(&v, t->check_rfbm, sizeof(t->check_rfbm));
	t->check = numbers(&v, 10, 8, dec);
	t->check_ftrace = ftrace;
}

/* The module's text: "key value" lines, "row ..." lines, "end" last. */
static int fpu_parse_module(char *text, struct fpu_table *t)
{
	size_t cap = 0;
	bool end = false;
	uint64_t x;

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *v = line, *key = word(&v);

		if (!v)
			v = key + strlen(key); /* a key alone */
		if (!strcmp(key, "row")) {
			if (t->nrows == cap) {
				struct fpu_row *rows;

				cap = cap ? 2 * cap : 64;
				rows = realloc(t->rows, cap * sizeof(*rows));
				if (!rows)
					return -1;
				t->rows = rows;
			}
			if (fpu_parse_row(v, &t->rows[t->nrows]))
				return -1;
			t->nrows++;
		} else if (!strcmp(key, "cpu") && number(&v, 10, &x)) {
			t->cpu = (int64_t)x;
		} else if (!strcmp(key, "tsc_khz")) {
			number(&v, 10, &t->tsc_khz);
		} else if (!strcmp(key, "tsc_invariant") && number(&v, 10, &x)) {
			t->tsc_invariant = x;
		} else if (!strcmp(key, "xcr0")) {
			copy_word(&v, t->xcr0, sizeof(t->xcr0));
		} else if (!strcmp(key, "task")) {
			copy_word(&v, t->task, sizeof(t->task));
		} else if (!strcmp(key, "xfd_capable")) {
			copy_word(&v, t->xfd, sizeof(t->xfd));
		} else if (!strcmp(key, "measured")) {
			copy_word(&v, t->measured, sizeof(t->measured));
		} else if (!strcmp(key, "variants")) {
			snprintf(t->variants, sizeof(t->variants), "%s", v);
		} else if (!strcmp(key, "kernel")) {
			copy_word(&v, t->kernel_save, sizeof(t->kernel_save));
			copy_word(&v, t->kernel_restore, sizeof(t->kernel_restore));
		} else if (!strcmp(key, "xrstor_format")) {
			copy_word(&v, t->xrstor_format, sizeof(t->xrstor_format));
		} else if (!strcmp(key, "samples")) {
			number(&v, 10, &t->samples);
		} else if (!strcmp(key, "timer")) {
			uint64_t *dec[] = { &t->timer_p50, &t->timer_min, &t->timer_p99 };

			numbers(&v, 10, 3, dec);
		} else if (!strcmp(key, "check")) {
			fpu_parse_check(v, t);
		} else if (!strcmp(key, "migrated") && number(&v, 10, &x)) {
			t->migrated = x;
		} else if (!strcmp(key, "end")) {
			end = true;
		}
	}
	return end ? 0 : -1;
}

/* The CPU as /proc/cpuinfo names it. */
static void fpu_cpuinfo(struct fpu_table *t)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	int64_t cpu = -1;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *v, *k = line;
		size_t n;

		if (!colon)
			continue;
		v = colon + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = 0;
		for (n = colon - line; n && (line[n - 1] == ' ' || line[n - 1] == '\t'); n--)
			;
		line[n] = 0;
		if (!strcmp(k, "processor"))
			cpu = strtoll(v, NULL, 10);
		if (cpu != t->cpu)
			continue;
		if (!strcmp(k, "vendor_id"))
			snprintf(t->vendor, sizeof(t->vendor), "%s", v);
		else if (!strcmp(k, "cpu family"))
			t->family = strtoll(v, NULL, 10);
		else if (!strcmp(k, "model"))
			t->model = strtoll(v, NULL, 10);
		else if (!strcmp(k, "stepping"))
			t->stepping = strtoll(v, NULL, 10);
		else if (!strcmp(k, "model name"))
			snprintf(t->cpu_model, sizeof(t->cpu_model), "%s", v);
		else if (!strcmp(k, "microcode"))
			snprintf(t->microcode, sizeof(t->microcode), "%s", v);
	}
	fclose(f);
}

static void fpu_now(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static const struct fpu_row *fpu_find(const struct fpu_table *t, const char *event,
				      const char *rfbm, const char *state)
{
	char hex[24];

	for (size_t i = 0; i < t->nrows; i++)
		if (!strcmp(t->rows[i].event, event) && !strcmp(t->rows[i].state, state) &&
		    !strcmp(hex64(hex, sizeof(hex), t->rows[i].rfbm), rfbm))
			return &t->rows[i];
	return NULL;
}

static void fpu_print_module(const struct fpu_table *t)
{
	const struct fpu_row *ref = fpu_find(t, t->check_op, t->check_rfbm, "modified");

	printf("# FPU save and restore latency on CPU %" PRId64
	       ", measured by coarse_stat_fs, %s\n",
	       t->cpu, t->date);
	printf("# cpu: %s family %" PRId64 " model %" PRId64 " stepping %" PRId64
	       ", %s, microcode %s\n",
	       t->vendor, t->family, t->model, t->stepping, t->cpu_model, t->microcode);
	printf("# kernel: %s\n", t->kernel);
	printf("# TSC: %.3f MHz, %s\n", t->tsc_khz / 1e3,
	       t->tsc_invariant ? "invariant" : "NOT invariant (cycles may not be constant time)");
	printf("# XCR0 %s; the task's xfeatures %s; measured %s (user components only; left out "
	       "as XFD can disable them: %s)\n",
	       t->xcr0, t->task, t->measured, t->xfd);
	printf("# instructions: %s; this kernel's own: %s and %s (* below); XRSTOR reads the %s "
	       "format\n",
	       t->variants, t->kernel_save, t->kernel_restore, t->xrstor_format);
	printf("# per row: %" PRIu64 " samples, interrupts off around each; XINUSE init: all "
	       "components in their init state, else all modified\n",
	       t->samples);
	printf("# timer: %" PRIu64 " cycles (min %" PRIu64 ", p99 %" PRIu64
	       "), subtracted from every sample\n",
	       t->timer_p50, t->timer_min, t->timer_p99);
	if (t->check && ref)
		printf("# live probes (csf_fpu events): %s, RFBM %s, modified, in a function: p50 %" PRIu64
		       " (p99 %" PRIu64 ") by probe, %" PRIu64 " (p99 %" PRIu64
		       ") by the timer around the call, %" PRIu64 " (p99 %" PRIu64
		       ") in the table; probe cost %" PRIu64 " (p99 %" PRIu64 ") subtracted\n",
		       t->check_op, t->check_rfbm, t->check_p50, t->check_p99, t->check_direct_p50,
		       t->check_direct_p99, ref->p50, ref->p99, t->check_ov_p50, t->check_ov_p99);
	else
		printf("# live probes: cannot be measured here (error %" PRId64 ")\n",
		       t->check_error);
	if (t->migrated)
		printf("# the run moved to another CPU between batches: rows may mix two CPUs\n");
	fpu_print_rows(t);
}

static void fpu_json_module(const struct fpu_table *t)
{
	json_begin(NULL);
	json_str("kind", "fpu");
	json_str("date", t->date);
	json_i64("cpu", t->cpu);
	json_str("vendor", t->vendor);
	json_i64("family", t->family);
	json_i64("model", t->model);
	json_i64("stepping", t->stepping);
	json_str("cpu_model", t->cpu_model);
	json_str("microcode", t->microcode);
	json_str("kernel", t->kernel);
	json_u64("tsc_khz", t->tsc_khz);
	json_bool("tsc_invariant", t->tsc_invariant);
	json_str("xcr0", t->xcr0);
	json_str("task_xfeatures", t->task);
	json_str("measured", t->measured);
	json_str("xfd_capable", t->xfd);
	json_str("variants", t->variants);
	json_str("kernel_save", t->kernel_save);
	json_str("kernel_restore", t->kernel_restore);
	json_str("xrstor_format", t->xrstor_format);
	json_u64("samples", t->samples);
	json_begin("timer");
	json_u64("p50", t->timer_p50);
	json_u64("min", t->timer_min);
	json_u64("p99", t->timer_p99);
	json_end();
	if (t->check) {
		json_begin("probe_check");
		json_str("event", t->check_op);
		json_str("rfbm", t->check_rfbm);
		json_u64("n", t->check_n);
		json_u64("p50", t->check_p50);
		json_u64("p99", t->check_p99);
		json_u64("direct_p50", t->check_direct_p50);
		json_u64("direct_p99", t->check_direct_p99);
		json_u64("probe_cost_p50", t->check_ov_p50);
		json_u64("probe_cost_p99", t->check_ov_p99);
		json_bool("ftrace", t->check_ftrace);
		json_end();
	} else {
		json_null("probe_check");
	}
	json_bool("migrated", t->migrated);
	json_str("unit", t->unit);
	fpu_json_rows(t);
	json_end();
	json_flush();
}

static int fpu_run_error(int e, unsigned int max_ms)
{
	switch (e) {
	case EACCES:
	case EPERM:
		fprintf(stderr,
			"%s: fpu: " FPU_PATH " is root's, with CAP_PERFMON or CAP_SYS_ADMIN\n",
			csfcat_prog);
		break;
	case ETIME:
		fprintf(stderr,
			"%s: fpu: the run took longer than %u ms; ask for fewer --samples or "
			"a larger --max-ms\n",
			csfcat_prog, max_ms);
		break;
	case EOPNOTSUPP:
		fprintf(stderr, "%s: fpu: this CPU (or kernel) does not use XSAVE\n", csfcat_prog);
		break;
	default:
		fprintf(stderr, "%s: fpu: %s: %s\n", csfcat_prog, FPU_PATH, strerror(e));
	}
	return EXIT_FAILURE;
}

/* Write the request, read the result. */
static int fpu_run(unsigned int samples, unsigned int max_ms, char **text)
{
	char req[64];
	int fd, e;

	fd = open(FPU_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	snprintf(req, sizeof(req), "samples=%u max_ms=%u\n", samples, max_ms);
	*text = write(fd, req, strlen(req)) < 0 ? NULL : fd_read_all(fd, NULL);
	e = errno;
	close(fd);
	errno = e;
	return *text ? 0 : -1;
}

static int parse_uint(const char *s, unsigned int lo, unsigned int hi, unsigned int *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || end == s || *end || x < lo || x > hi)
		return -1;
	*v = (unsigned int)x;
	return 0;
}

static int cmd_fpu(int argc, char **argv)
{
	static const struct option opts[] = { { "samples", required_argument, NULL, 's' },
					      { "max-ms", required_argument, NULL, 'm' },
					      { "json", no_argument, NULL, 'j' },
					      { 0 } };
	unsigned int samples = 1000, max_ms = 10000;
	struct fpu_table t = { .kind = "fpu", .unit = "cycles" };
	struct utsname u;
	bool json = false;
	char *text = NULL;
	cpu_set_t set;
	int c, cpu;

	optind = 0; /* glibc: reinitialize, main() already parsed */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's' && !parse_uint(optarg, 1, 100000, &samples))
			continue;
		if (c == 'm' && !parse_uint(optarg, 1, 60000, &max_ms))
			continue;
		if (c == 'j') {
			json = true;
			continue;
		}
		if (c == 's' || c == 'm')
			return csfcat_usage_error("fpu", "out of range:", argv[optind - 1]);
		return csfcat_usage_error("fpu", "unknown option", argv[optind - 1]);
	}
	if (optind != argc)
		return csfcat_usage_error("fpu", "takes no arguments", NULL);

	/* One CPU for the whole run: the one it starts on. */
	cpu = sched_getcpu();
	CPU_ZERO(&set);
	if (cpu >= 0) {
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	fpu_now(t.date, sizeof(t.date));
	if (fpu_run(samples, max_ms, &text)) {
		if (errno == ENOENT)
			return csfcat_map_error(CSF_FPU_FILE);
		return fpu_run_error(errno, max_ms);
	}
	if (fpu_parse_module(text, &t)) {
		fprintf(stderr, "%s: fpu: cannot read what " FPU_PATH " returned\n", csfcat_prog);
		free(text);
		free(t.rows);
		return EXIT_FAILURE;
	}
	free(text);
	fpu_cpuinfo(&t);
	if (!uname(&u))
		snprintf(t.kernel, sizeof(t.kernel), "Linux %s %s", u.release, u.version);
	if (json)
		fpu_json_module(&t);
	else
		fpu_print_module(&t);
	free(t.rows);
	return 0;
}

/* ---- csfcat fpu-report ---- */

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

static int fpu_compare(const char *a, const char *b, bool json);

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

/* ---- --compare: the JSON the two commands write, side by side ---- */

static int fpu_load_json(const char *path, struct fpu_table *t)
{
	FILE *f = fopen(path, "r");
	const struct json_value *rows;
	struct json_value root;
	char *text = NULL;
	size_t cap = 0;
	const char *end;

	memset(t, 0, sizeof(*t));
	if (!f || getline(&text, &cap, f) < 0) {
		fprintf(stderr, "%s: fpu-report: %s: %s\n", csfcat_prog, path,
			f ? "empty" : strerror(errno));
		if (f)
			fclose(f);
		free(text);
		return -1;
	}
	fclose(f);
	end = json_parse(text, &root);
	free(text);
	rows = json_get(&root, "rows");
	if (!end || root.type != JSON_OBJ || !rows || rows->type != JSON_ARR) {
		fprintf(stderr, "%s: fpu-report: %s: not the JSON of csfcat fpu or fpu-report\n",
			csfcat_prog, path);
		json_value_free(&root);
		return -1;
	}
	json_get_str(&root, "kind", t->kind, sizeof(t->kind));
	json_get_str(&root, "unit", t->unit, sizeof(t->unit));
	json_get_str(&root, "date", t->date, sizeof(t->date));
	json_get_str(&root, "source", t->source, sizeof(t->source));
	json_get_str(&root, "cpu_model", t->cpu_model, sizeof(t->cpu_model));
	json_get_str(&root, "microcode", t->microcode, sizeof(t->microcode));
	json_get_str(&root, "kernel", t->kernel, sizeof(t->kernel));
	t->tsc_khz = json_get_u64(&root, "tsc_khz");
	t->rows = calloc(rows->n + 1, sizeof(*t->rows));
	if (!t->rows) {
		json_value_free(&root);
		return -1;
	}
	for (size_t i = 0; i < rows->n; i++) {
		const struct json_value *r = &rows->kids[i];
		struct fpu_row *row = &t->rows[t->nrows++];
		char hex[24] = "";

		json_get_str(r, "event", row->event, sizeof(row->event));
		json_get_str(r, "state", row->state, sizeof(row->state));
		json_get_str(r, "rfbm", hex, sizeof(hex));
		row->rfbm = strtoull(hex, NULL, 16);
		hex[0] = 0;
		json_get_str(r, "xinuse", hex, sizeof(hex));
		row->xinuse = strtoull(hex, NULL, 16);
		row->cnt = json_get_u64(r, "cnt");
		row->avg97 = json_get_u64(r, "avg97");
		row->p50 = json_get_u64(r, "p50");
		row->p99 = json_get_u64(r, "p99");
	}
	json_value_free(&root);
	return 0;
}

/* Rows of both runs match by instruction (or event), RFBM and state (or XINUSE). */
static bool fpu_same_row(const struct fpu_row *a, const struct fpu_row *b)
{
	if (strcmp(a->event, b->event) != 0 || a->rfbm != b->rfbm)
		return false;
	if (a->state[0] && b->state[0])
		return !strcmp(a->state, b->state);
	return a->xinuse == b->xinuse;
}

static void fpu_describe(const char *name, const char *path, const struct fpu_table *t)
{
	if (!strcmp(t->kind, "fpu"))
		printf("# %s: %s: csfcat fpu, %s, %s, microcode %s, %s, TSC %.3f MHz\n", name, path,
		       t->date, t->cpu_model, t->microcode, t->kernel, t->tsc_khz / 1e3);
	else
		printf("# %s: %s: csfcat fpu-report of %s\n", name, path, t->source);
}

#define CMP_COLS 14

static const char *const cmp_heads[CMP_COLS] = {
	"EVENTs", "RFBM",  "XINUSE", "CNT A", "CNT B", "avg97 A", "avg97 B",
	"B/A",	  "p50 A", "p50 B",  "B/A",   "p99 A", "p99 B",	  "B/A",
};

/* The rows of A with their match in B, then those only B has. */
struct cmp_pairs {
	const struct fpu_row *(*p)[2];
	size_t n;
};

static void cmp_ratio(char *buf, const struct fpu_row *a, const struct fpu_row *b, uint64_t va,
		      uint64_t vb)
{
	if (a && b && va)
		snprintf(buf, CELL, "%.2f", (double)vb / (double)va);
	else
		snprintf(buf, CELL, "-");
}

static void cmp_val(char *buf, const struct fpu_row *r, uint64_t v)
{
	if (r)
		snprintf(buf, CELL, "%" PRIu64, v);
	else
		snprintf(buf, CELL, "-");
}

static void cmp_cells(const void *ctx, long i, char c[MAX_COLS][CELL])
{
	const struct cmp_pairs *pairs = ctx;
	const struct fpu_row *a, *b, *r;

	if (i < 0) {
		for (int k = 0; k < CMP_COLS; k++)
			snprintf(c[k], CELL, "%s", cmp_heads[k]);
		return;
	}
	a = pairs->p[i][0];
	b = pairs->p[i][1];
	r = a ? a : b;
	snprintf(c[0], CELL, "%s%s%s", r->event, r->state[0] ? " " : "", r->state);
	hex64(c[1], CELL, r->rfbm);
	if (a && b && a->xinuse != b->xinuse)
		snprintf(c[2], CELL, "0x%" PRIx64 "/0x%" PRIx64, a->xinuse, b->xinuse);
	else
		hex64(c[2], CELL, r->xinuse);
	cmp_val(c[3], a, a ? a->cnt : 0);
	cmp_val(c[4], b, b ? b->cnt : 0);
	cmp_val(c[5], a, a ? a->avg97 : 0);
	cmp_val(c[6], b, b ? b->avg97 : 0);
	cmp_ratio(c[7], a, b, a ? a->avg97 : 0, b ? b->avg97 : 0);
	cmp_val(c[8], a, a ? a->p50 : 0);
	cmp_val(c[9], b, b ? b->p50 : 0);
	cmp_ratio(c[10], a, b, a ? a->p50 : 0, b ? b->p50 : 0);
	cmp_val(c[11], a, a ? a->p99 : 0);
	cmp_val(c[12], b, b ? b->p99 : 0);
	cmp_ratio(c[13], a, b, a ? a->p99 : 0, b ? b->p99 : 0);
}

static void fpu_pairs(const struct fpu_table *a, const struct fpu_table *b, struct cmp_pairs *pr)
{
	pr->n = 0;
	for (size_t i = 0; i < a->nrows; i++) {
		pr->p[pr->n][0] = &a->rows[i];
		pr->p[pr->n][1] = NULL;
		for (size_t j = 0; j < b->nrows; j++)
			if (fpu_same_row(&a->rows[i], &b->rows[j]))
				pr->p[pr->n][1] = &b->rows[j];
		pr->n++;
	}
	for (size_t j = 0; j < b->nrows; j++) {
		bool seen = false;

		for (size_t i = 0; i < a->nrows && !seen; i++)
			seen = fpu_same_row(&a->rows[i], &b->rows[j]);
		if (!seen) {
			pr->p[pr->n][0] = NULL;
			pr->p[pr->n][1] = &b->rows[j];
			pr->n++;
		}
	}
}

static void cmp_json_side(const char *key, const struct fpu_row *r)
{
	if (!r) {
		json_null(key);
		return;
	}
	json_begin(key);
	json_u64("cnt", r->cnt);
	json_u64("avg97", r->avg97);
	json_u64("p50", r->p50);
	json_u64("p99", r->p99);
	json_end();
}

static void cmp_json_ratio(const char *key, const struct fpu_row *a, const struct fpu_row *b,
			   uint64_t va, uint64_t vb)
{
	if (a && b && va)
		json_double(key, (double)vb / (double)va, 4);
	else
		json_null(key);
}

static void fpu_compare_json(const char *pa, const char *pb, const struct fpu_table *a,
			     const struct cmp_pairs *pr)
{
	char hex[24];

	json_begin(NULL);
	json_str("kind", "fpu-compare");
	json_str("a", pa);
	json_str("b", pb);
	json_str("unit", a->unit);
	json_begin_array("rows");
	for (size_t i = 0; i < pr->n; i++) {
		const struct fpu_row *ra = pr->p[i][0], *rb = pr->p[i][1], *r = ra ? ra : rb;

		json_begin(NULL);
		json_str("event", r->event);
		if (r->state[0])
			json_str("state", r->state);
		json_str("rfbm", hex64(hex, sizeof(hex), r->rfbm));
		cmp_json_side("a", ra);
		cmp_json_side("b", rb);
		cmp_json_ratio("avg97_ratio", ra, rb, ra ? ra->avg97 : 0, rb ? rb->avg97 : 0);
		cmp_json_ratio("p50_ratio", ra, rb, ra ? ra->p50 : 0, rb ? rb->p50 : 0);
		cmp_json_ratio("p99_ratio", ra, rb, ra ? ra->p99 : 0, rb ? rb->p99 : 0);
		json_end();
	}
	json_end_array();
	json_end();
	json_flush();
}

static int fpu_compare(const char *pa, const char *pb, bool json)
{
	struct fpu_table a, b;
	struct cmp_pairs pr;
	int ret = EXIT_FAILURE;

	if (fpu_load_json(pa, &a))
		return EXIT_FAILURE;
	if (fpu_load_json(pb, &b)) {
		free(a.rows);
		return EXIT_FAILURE;
	}
	if (strcmp(a.unit, b.unit) != 0) {
		fprintf(stderr, "%s: fpu-report: %s counts in %s, %s in %s: not comparable\n",
			csfcat_prog, pa, a.unit, pb, b.unit);
		goto out;
	}
	pr.p = calloc(a.nrows + b.nrows + 1, sizeof(*pr.p));
	if (!pr.p)
		goto out;
	fpu_pairs(&a, &b, &pr);
	if (json) {
		fpu_compare_json(pa, pb, &a, &pr);
	} else {
		fpu_describe("A", pa, &a);
		fpu_describe("B", pb, &b);
		printf("# unit: %s; B/A: B's value over A's\n", a.unit);
		print_table(CMP_COLS, pr.n, cmp_cells, &pr);
	}
	free(pr.p);
	ret = 0;
out:
	free(a.rows);
	free(b.rows);
	return ret;
}

const struct csfcat_cmd csfcat_cmd_fpu = {
	.name = "fpu",
	.args = "[--samples N] [--max-ms MS] [--json]",
	.help = "XSAVE/XRSTOR latency measured by the module on this CPU (root): one row per\n"
		"instruction, RFBM and XINUSE state, in TSC cycles (default 1000 samples a row,\n"
		"at most 10000 ms)",
	.run = cmd_fpu,
};

const struct csfcat_cmd csfcat_cmd_fpu_report = {
	.name = "fpu-report",
	.args = "[FILE|-] [--json] | --compare A.json B.json [--json]",
	.help = "the latency table of a trace log of the x86_fpu_latency_* events (trace_pipe or\n"
		"trace-cmd report), as the series' script prints it, plus p50, p99 and the\n"
		"unit; --compare: two --json outputs side by side, with ratios",
	.run = cmd_fpu_report,
};
