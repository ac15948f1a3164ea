// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat: print the coarse_stat_fs pages as text. See csfcat(1) and "csfcat --help".
 *
 * Exit status: 0 success, 1 an error, 2 a usage error, 3 the module is not loaded, 4 the
 * filesystem is not mounted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/coarse_stat_fs.h"

enum { EXIT_USAGE = 2, EXIT_NOT_LOADED = 3, EXIT_NOT_MOUNTED = 4 };

static const char *prog = "csfcat";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s COMMAND [ARGS]\n"
		"Print the coarse_stat_fs pages (" CSF_MOUNT_POINT ").\n"
		"\n"
		"Commands:\n"
		"  cpu [--ns]  the cpu page in /proc/stat's format: the sum line, then one\n"
		"              line per online CPU, in USER_HZ ticks (--ns: nanoseconds)\n"
		"  thread      the calling thread's page, every field with its unit\n"
		"  self N      sleep N/2 ms, spin N/2 ms, and print where the N ms went\n"
		"\n"
		"Options:\n"
		"  -h, --help  this text\n"
		"\n"
		"Exit status: 0 success, 1 error, 2 usage error, 3 module not loaded,\n"
		"4 filesystem not mounted.\n",
		prog);
}

/* Explain a failure to map a page, and return the exit status that goes with it. */
static int map_error(const char *what)
{
	struct stat st;
	int e = errno;

	if (e == ENOENT && stat(CSF_MOUNT_POINT, &st)) {
		fprintf(stderr,
			"%s: the coarse_stat_fs module is not loaded (no " CSF_MOUNT_POINT ").\n"
			"Load it with: sudo insmod kmod/coarse_stat_fs.ko (or sudo modprobe "
			"coarse_stat_fs)\n",
			prog);
		return EXIT_NOT_LOADED;
	}
	if (e == ENOENT) {
		fprintf(stderr,
			"%s: coarse_stat_fs is not mounted.\n"
			"Mount it with: sudo mount -t coarse_stat_fs none " CSF_MOUNT_POINT "\n",
			prog);
		return EXIT_NOT_MOUNTED;
	}
	if (e == EPROTO)
		fprintf(stderr, "%s: %s: the module speaks another ABI than this csfcat (%d)\n",
			prog, what, CSF_ABI_VERSION);
	else
		fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(e));
	return EXIT_FAILURE;
}

static double ms(const struct csf_hdr *h, uint64_t cyc)
{
	return csf_cyc_to_ns(h, cyc) / 1e6;
}

static void print_tsc(const struct csf_hdr *h)
{
	printf("tsc            %.3f MHz, %s, read with %s\n", h->tsc_hz / 1e6,
	       h->flags & CSF_HDR_TSC_INVARIANT ? "invariant" :
						  "NOT invariant (cycles may not be constant time)",
	       h->flags & CSF_HDR_RDTSCP ? "rdtscp" : "lfence; rdtsc");
}

static int cmd_thread(void)
{
	static const char *const names[CSF_NR_STATES] = { "oncpu", "runq", "sleep", "dsleep",
							  "iowait" };
	struct csf_snap s;
	const struct csf_thread_page *p = &s.p;
	const struct csf_hdr *h = &p->hdr;

	if (csf_thread_snap(&s))
		return map_error(CSF_THREAD_FILE);

	printf("thread-self of tid %u (ABI %u)\n", p->tid, h->abi_version);
	print_tsc(h);
	printf("state          %s%s\n", p->state < CSF_NR_STATES ? names[p->state] : "?",
	       p->flags & CSF_THREAD_PARKED ? " (parked)" : "");
	printf("start_tsc      %" PRIu64 " cycles\n", (uint64_t)p->start_tsc);
	printf("last_switch    %" PRIu64 " cycles (%.3f ms before this snapshot)\n",
	       (uint64_t)p->last_switch_tsc, ms(h, s.tsc - p->last_switch_tsc));
	printf("snapshot tsc   %" PRIu64 " cycles (%.3f ms since start)%s\n", s.tsc,
	       ms(h, s.tsc - p->start_tsc), s.extrapolated ? "" : ", not extrapolated");
	for (int i = 0; i < CSF_NR_STATES; i++) {
		char name[16];

		snprintf(name, sizeof(name), "%s_cyc", names[i]);
		printf("%-14s %" PRIu64 " cycles (%.3f ms)\n", name, (uint64_t)p->cyc[i],
		       ms(h, p->cyc[i]));
	}
	printf("nr_preempt     %" PRIu64 " involuntary switches\n", (uint64_t)p->nr_preempt);
	printf("nr_block       %" PRIu64 " voluntary switches\n", (uint64_t)p->nr_block);
	printf("nr_migrate     %" PRIu64 " returns on another CPU\n", (uint64_t)p->nr_migrate);
	printf("min_flt        %" PRIu64 " minor faults\n", (uint64_t)p->min_flt);
	printf("maj_flt        %" PRIu64 " major faults\n", (uint64_t)p->maj_flt);
	printf("syscr          %" PRIu64 " read syscalls\n", (uint64_t)p->syscr);
	printf("syscw          %" PRIu64 " write syscalls\n", (uint64_t)p->syscw);
	printf("rchar          %" PRIu64 " bytes read by syscalls\n", (uint64_t)p->rchar);
	printf("wchar          %" PRIu64 " bytes written by syscalls\n", (uint64_t)p->wchar);
	printf("read_bytes     %" PRIu64 " bytes read from storage\n", (uint64_t)p->read_bytes);
	printf("write_bytes    %" PRIu64 " bytes written to storage\n", (uint64_t)p->write_bytes);
	printf("sum_exec_ns    %" PRIu64 " ns on a CPU (scheduler's count)\n",
	       (uint64_t)p->sum_exec_ns);
	printf("run_delay_ns   %" PRIu64 " ns waiting in a runqueue (scheduler's count)\n",
	       (uint64_t)p->run_delay_ns);
	printf("cpu            %u\n", p->cpu);
	return 0;
}

/* /proc/stat counts in USER_HZ ticks; nsec_to_clock_t() in the kernel. */
#define CSF_USER_HZ 100

static int cmd_cpu(bool ns)
{
	struct csf_cpu_row *rows;
	int n = csf_cpu_count();
	uint64_t div = ns ? 1 : 1000000000u / CSF_USER_HZ;

	if (n < 0)
		return map_error(CSF_CPU_FILE);
	rows = calloc((size_t)n + 1, sizeof(*rows));
	if (!rows || csf_cpu_snap_all(rows, n + 1, NULL) < 0) {
		fprintf(stderr, "%s: cpu: %s\n", prog, strerror(errno));
		free(rows);
		return EXIT_FAILURE;
	}
	/* Like /proc/stat: the sum first, then only online CPUs. */
	for (int i = 0; i <= n; i++) {
		const struct csf_cpu_row *r = &rows[i];
		char name[16];

		if (i && !r->online)
			continue;
		if (i)
			snprintf(name, sizeof(name), "cpu%d", r->cpu);
		else
			snprintf(name, sizeof(name), "cpu ");
		printf("%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		       " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		       name, (uint64_t)r->user / div, (uint64_t)r->nice / div,
		       (uint64_t)r->system / div, (uint64_t)r->idle / div,
		       (uint64_t)r->iowait / div, (uint64_t)r->irq / div,
		       (uint64_t)r->softirq / div, (uint64_t)r->steal / div,
		       (uint64_t)r->guest / div, (uint64_t)r->guest_nice / div);
	}
	free(rows);
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmd_self(const char *arg)
{
	char *end, line[CSF_DIFF_BUFSZ];
	struct csf_snap a, b;
	unsigned long n;
	uint64_t half_ns, until;
	struct timespec ts;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || *end || !*arg || n == 0 || n > 3600000) {
		fprintf(stderr, "%s: self: N must be a number of ms from 1 to 3600000, not '%s'\n",
			prog, arg);
		return EXIT_USAGE;
	}
	half_ns = n * 500000ull;

	if (csf_thread_snap(&a))
		return map_error(CSF_THREAD_FILE);
	ts.tv_sec = (time_t)(half_ns / 1000000000u);
	ts.tv_nsec = (long)(half_ns % 1000000000u);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	for (until = mono_ns() + half_ns; mono_ns() < until;)
		;
	if (csf_thread_snap(&b))
		return map_error(CSF_THREAD_FILE);

	if (csf_format_diff(line, sizeof(line), &a, &b) < 0) {
		fprintf(stderr, "%s: self: %s\n", prog, strerror(errno));
		return EXIT_FAILURE;
	}
	printf("sleep %g ms + spin %g ms: %s\n", n / 2.0, n / 2.0, line);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		usage(stderr);
		return EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[0], "cpu") && argc == 1)
		return cmd_cpu(false);
	if (!strcmp(argv[0], "cpu") && argc == 2 && !strcmp(argv[1], "--ns"))
		return cmd_cpu(true);
	if (!strcmp(argv[0], "thread") && argc == 1)
		return cmd_thread();
	if (!strcmp(argv[0], "self") && argc == 2)
		return cmd_self(argv[1]);
	fprintf(stderr, "%s: unknown command or wrong arguments: %s (see %s --help)\n", prog,
		argv[0], prog);
	return EXIT_USAGE;
}
