// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat slices: follow the long-slice watch's reports (the root-only file "slices"), like
 * dmesg -w, as text or JSON, optionally setting the threshold (slice_warn_us) for the run and
 * putting the old one back on exit or signal; --prometheus counts them (csfcat_slices_prom.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/coarse_stat_fs.h"
#include "csfcat.h"
#include "csfcat_slices.h"
#include "prom.h"

#define SLICES_PATH CSF_MOUNT_POINT "/" CSF_SLICES_FILE
#define WARN_PARAM SLICES_WARN_PARAM
#define MAX_FIELDS 24

static volatile sig_atomic_t stop_signal;
static char old_threshold[32]; /* slice_warn_us before this run changed it; "" if it did not */

static void on_signal(int sig)
{
	stop_signal = sig;
}

static int write_param(const char *value)
{
	int fd = open(WARN_PARAM, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n < 0 ? -1 : 0;
}

static int read_param(char *buf, size_t len)
{
	int fd = open(WARN_PARAM, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static void restore_threshold(void)
{
	if (old_threshold[0] && write_param(old_threshold))
		fprintf(stderr, "%s: slices: could not restore slice_warn_us=%s: %s\n", csfcat_prog,
			old_threshold, strerror(errno));
	old_threshold[0] = 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Undo the kernel's \xHH escapes (lower-case hex), in place. */
static char *unescape(char *s)
{
	char *w = s;

	for (const char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] == 'x' && r[2] && r[3] && hex_digit(r[2]) >= 0 &&
		    hex_digit(r[3]) >= 0) {
			*w++ = (char)(hex_digit(r[2]) * 16 + hex_digit(r[3]));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
	return s;
}

struct field {
	char *key, *value;
};

/* Split a report line into its key=value fields; returns how many. */
static int split(char *line, struct field *f, int max)
{
	int n = 0;

	for (char *tok = strtok(line, " \n"); tok && n < max; tok = strtok(NULL, " \n")) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = 0;
		f[n].key = tok;
		f[n].value = eq + 1;
		n++;
	}
	return n;
}

static const char *get(const struct field *f, int n, const char *key)
{
	for (int i = 0; i < n; i++) {
		if (!strcmp(f[i].key, key))
			return f[i].value;
	}
	return "";
}

static bool numeric(const char *key)
{
	static const char *const keys[] = { "seq",     "cpu",	  "tid",      "tgid",
					    "rtprio",  "nice",	  "start_ns", "len_ns",
					    "waiting", "exec_ns", NULL };

	for (int i = 0; keys[i]; i++) {
		if (!strcmp(keys[i], key))
			return true;
	}
	return false;
}

static void print_json(struct field *f, int n)
{
	json_begin(NULL);
	for (int i = 0; i < n; i++) {
		if (!strcmp(f[i].key, "stack")) {
			json_begin_array("stack");
			for (char *fr = strtok(f[i].value, ","); fr; fr = strtok(NULL, ","))
				if (strcmp(fr, "-") != 0)
					json_str(NULL, unescape(fr));
			json_end_array();
		} else if (numeric(f[i].key)) {
			json_i64(f[i].key, strtoll(f[i].value, NULL, 10));
		} else {
			json_str(f[i].key, unescape(f[i].value));
		}
	}
	json_end();
	json_flush();
}

static void print_text(struct field *f, int n)
{
	char *stack = (char *)get(f, n, "stack");
	bool end = !strcmp(get(f, n, "event"), "end");
	const char *policy = get(f, n, "policy"), *exec_ns = get(f, n, "exec_ns");
	char prio[32], exec[48] = "";

	if (!strcmp(policy, "fifo") || !strcmp(policy, "rr"))
		snprintf(prio, sizeof(prio), "%s/%s", policy, get(f, n, "rtprio"));
	else if (!strcmp(policy, "deadline"))
		snprintf(prio, sizeof(prio), "%s", policy);
	else
		snprintf(prio, sizeof(prio), "%s nice %s", policy, get(f, n, "nice"));
	/* The task's own execution time over the slice (kernels' lines from before it: none). */
	if (*exec_ns && *exec_ns != '-')
		snprintf(exec, sizeof(exec), " (executing %.3f ms)",
			 strtoull(exec_ns, NULL, 10) / 1e6);
	printf("cpu %s tid %s tgid %s (%s) class %s, %s: %s %.3f ms%s%s; %s waiting; began at %.6f s\n",
	       get(f, n, "cpu"), get(f, n, "tid"), get(f, n, "tgid"),
	       unescape((char *)get(f, n, "comm")), get(f, n, "class"), prio,
	       end ? "slice ended after" : "on the CPU for",
	       strtoull(get(f, n, "len_ns"), NULL, 10) / 1e6, exec, end ? "" : ", still running",
	       get(f, n, "waiting"), strtoull(get(f, n, "start_ns"), NULL, 10) / 1e9);
	if (strcmp(stack, "-") != 0 && *stack) {
		printf("    stack (%s):", get(f, n, "stack_via"));
		for (char *fr = strtok(stack, ","); fr; fr = strtok(NULL, ","))
			printf(" %s", unescape(fr));
		putchar('\n');
	}
	fflush(stdout);
}

/* Print one line of the file; count it for --prometheus; true when it counted something. */
static bool print_line(char *line, bool json)
{
	struct field f[MAX_FIELDS];
	unsigned long long lost;
	bool counted;
	int n;

	if (!strncmp(line, "lost ", 5)) {
		lost = strtoull(line + 5, NULL, 10);
		slices_prom_lost(lost);
		if (json) {
			json_begin(NULL);
			json_u64("lost", lost);
			json_end();
			json_flush();
		} else {
			printf("lost %llu reports: the kernel keeps only the newest; read faster\n",
			       lost);
			fflush(stdout);
		}
		return true;
	}
	n = split(line, f, MAX_FIELDS);
	/* Each slice once, when it ends: its "running" reports come before. */
	counted = !strcmp(get(f, n, "event"), "end");
	if (counted)
		slices_prom_count(get(f, n, "class"), strtoull(get(f, n, "len_ns"), NULL, 10));
	if (json)
		print_json(f, n);
	else
		print_text(f, n);
	return counted;
}

static int set_threshold(const char *arg)
{
	char *end, value[32];
	double ms;

	errno = 0;
	ms = strtod(arg, &end);
	if (errno || *end || !*arg || ms < 1 || ms > 60000)
		return csfcat_usage_error("slices", "--threshold takes ms, from 1 to 60000, not",
					  arg);
	if (read_param(old_threshold, sizeof(old_threshold))) {
		old_threshold[0] = 0;
		return csfcat_map_error(WARN_PARAM);
	}
	snprintf(value, sizeof(value), "%.0f", ms * 1000);
	if (write_param(value)) {
		int e = errno;

		old_threshold[0] = 0;
		errno = e;
		fprintf(stderr, "%s: slices: cannot set slice_warn_us: %s%s\n", csfcat_prog,
			strerror(e), e == EACCES ? " (root only)" : "");
		return EXIT_FAILURE;
	}
	return 0;
}

static int cmd_slices(int argc, char **argv)
{
	static const struct option opts[] = { { "threshold", required_argument, NULL, 't' },
					      { "json", no_argument, NULL, 'j' },
					      { "dump", no_argument, NULL, 'd' },
					      { "prometheus", required_argument, NULL, 'p' },
					      { 0 } };
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: read() returns */
	const char *threshold = NULL, *prom = NULL;
	bool json = false, dump = false;
	char buf[65536];
	int c, fd, err;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 't')
			threshold = optarg;
		else if (c == 'j')
			json = true;
		else if (c == 'd')
			dump = true;
		else if (c == 'p')
			prom = optarg;
		else
			return csfcat_usage_error("slices", "unknown option", argv[optind - 1]);
	}
	if (optind != argc)
		return csfcat_usage_error("slices", "takes no arguments", NULL);
	if (prom && prom_check_dir(SLICES_CMD, prom))
		return EXIT_FAILURE;

	fd = open(SLICES_PATH, O_RDONLY | O_CLOEXEC | (dump ? O_NONBLOCK : 0));
	if (fd < 0) {
		if (errno == EACCES) {
			fprintf(stderr, "%s: slices: " SLICES_PATH " is root's: run as root\n",
				csfcat_prog);
			return EXIT_FAILURE;
		}
		return csfcat_map_error(CSF_SLICES_FILE);
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (threshold) {
		err = set_threshold(threshold);
		if (err) {
			close(fd);
			return err;
		}
	}
	if (!json && !dump) {
		char now[32] = "";

		read_param(now, sizeof(now));
		fprintf(stderr, "%s: following " SLICES_PATH " (slice_warn_us %s%s); Ctrl-C ends\n",
			csfcat_prog, now, !strcmp(now, "0") ? ": the watch is off" : "");
	}
	/* The counters from zero, so that rate() has a start, and the threshold just set. */
	if (prom && slices_prom_write(prom)) {
		restore_threshold();
		close(fd);
		return EXIT_FAILURE;
	}

	while (!stop_signal) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		bool counted = false;
		char *line, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN && dump)
			break;
		if (n <= 0) {
			err = errno;
			restore_threshold();
			close(fd);
			fprintf(stderr, "%s: slices: read: %s\n", csfcat_prog,
				n ? strerror(err) : "end of file");
			return EXIT_FAILURE;
		}
		buf[n] = 0;
		/* The kernel returns whole lines only. */
		for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = 0;
			counted |= print_line(line, json);
		}
		/* A full disk is said, and following goes on: the next write may succeed. */
		if (prom && counted)
			slices_prom_write(prom);
	}
	restore_threshold();
	close(fd);
	/* Also after --dump, which may have counted nothing. */
	return prom && slices_prom_write(prom) ? EXIT_FAILURE : 0;
}

const struct csfcat_cmd csfcat_cmd_slices = {
	.name = "slices",
	.args = "[--threshold MS] [--json] [--dump] [--prometheus FILE]",
	.help = "follow the reports of CPU slices longer than slice_warn_us, like dmesg -w\n"
		"(root); --threshold sets slice_warn_us for the run and restores it on exit;\n"
		"--dump prints what the kernel holds and exits; --prometheus: also count the\n"
		"slices that ended, by class and length, in FILE for node_exporter",
	.run = cmd_slices,
};
