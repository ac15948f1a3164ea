// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat fpu: the module's calibrated XSAVE/XRSTOR latency table (the fpu file), with what
 * says where it was measured. csfcat_fpu_table.c lays the table out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../lib/coarse_stat_fs.h"
#include "csfcat.h"
#include "csfcat_fpu.h"
#include "prom.h"
#include "util.h"

#define FPU_PATH CSF_MOUNT_POINT "/" CSF_FPU_FILE

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
		    !strcmp(fpu_hex64(hex, sizeof(hex), t->rows[i].rfbm), rfbm))
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

/*
 * The open found no fpu file: no module, no mount (csfcat_map_error() says which), or a module
 * without the file, one built for arm64 (or older than the file): what the command needs is not
 * there (EXIT_UNSUPPORTED, docs/fpu.md).
 */
static int fpu_absent(void)
{
	struct stat st;

	if (stat(CSF_MOUNT_POINT "/" CSF_THREAD_FILE, &st)) {
		errno = ENOENT;
		return csfcat_map_error(CSF_FPU_FILE);
	}
	fprintf(stderr,
		"%s: fpu: this module has no " FPU_PATH
		": XSAVE/XRSTOR latency is x86-64's (or the module predates it)\n",
		csfcat_prog);
	return EXIT_UNSUPPORTED;
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
					      { "prometheus", required_argument, NULL, 'p' },
					      { 0 } };
	unsigned int samples = 1000, max_ms = 10000;
	const char *prom = NULL;
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
		if (c == 'p') {
			prom = optarg;
			continue;
		}
		if (c == 's' || c == 'm')
			return csfcat_usage_error("fpu", "out of range:", argv[optind - 1]);
		return csfcat_usage_error("fpu", "unknown option", argv[optind - 1]);
	}
	if (optind != argc)
		return csfcat_usage_error("fpu", "takes no arguments", NULL);
	if (prom && prom_check_dir("fpu", prom))
		return EXIT_FAILURE;

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
			return fpu_absent();
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
	c = prom && fpu_prom_write(prom, &t) ? EXIT_FAILURE : 0;
	free(t.rows);
	return c;
}

const struct csfcat_cmd csfcat_cmd_fpu = {
	.name = "fpu",
	.args = "[--samples N] [--max-ms MS] [--json] [--prometheus FILE]",
	.help = "XSAVE/XRSTOR latency measured by the module on this CPU (root): one row per\n"
		"instruction, RFBM and XINUSE state, in TSC cycles (default 1000 samples a row,\n"
		"at most 10000 ms); --prometheus: also write the table to FILE for node_exporter",
	.run = cmd_fpu,
};
