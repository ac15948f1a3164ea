// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat cpu: the cpu page, in /proc/stat's format or as JSON (for Prometheus:
 * csfcat_cpu_prom.c).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/coarse_stat_fs.h"
#include "csfcat.h"
#include "prom.h"

/* /proc/stat counts in USER_HZ ticks; nsec_to_clock_t() in the kernel. */
#define CSF_USER_HZ 100

static const char *const cpu_fields[] = { "user", "nice",    "system", "idle",	"iowait",
					  "irq",  "softirq", "steal",  "guest", "guest_nice" };

static void row_values(const struct csf_cpu_row *r, uint64_t v[10])
{
	v[0] = r->user;
	v[1] = r->nice;
	v[2] = r->system;
	v[3] = r->idle;
	v[4] = r->iowait;
	v[5] = r->irq;
	v[6] = r->softirq;
	v[7] = r->steal;
	v[8] = r->guest;
	v[9] = r->guest_nice;
}

static void print_json(const struct csf_cpu_row *rows, int n, uint64_t mono_ns)
{
	json_begin(NULL);
	json_u64("update_mono_ns", mono_ns);
	json_str("unit", "ns");
	json_begin_array("cpus");
	for (int i = 0; i <= n; i++) {
		uint64_t v[10];

		row_values(&rows[i], v);
		json_begin(NULL);
		if (i)
			json_i64("cpu", rows[i].cpu);
		else
			json_str("cpu", "all");
		json_bool("online", rows[i].online);
		for (int f = 0; f < 10; f++)
			json_u64(cpu_fields[f], v[f]);
		json_end();
	}
	json_end_array();
	json_end();
	json_flush();
}

/* Only what node_exporter does not export: see csfcat_cpu_prom.c. */
static int write_prometheus(const char *path)
{
	struct csf_cpu_snap c;

	if (csf_cpu_snap(&c, CSF_CPU_ALL))
		return csfcat_map_error(CSF_CPU_FILE);
	return cpu_prom_write(path, c.period_us) ? EXIT_FAILURE : 0;
}

static int cmd_cpu(int argc, char **argv)
{
	static const struct option opts[] = { { "ns", no_argument, NULL, 'n' },
					      { "json", no_argument, NULL, 'j' },
					      { "prometheus", required_argument, NULL, 'p' },
					      { 0 } };
	bool ns = false, json = false;
	const char *prom = NULL;
	struct csf_cpu_row *rows;
	uint64_t div, mono_ns;
	int c, n;

	optind = 0; /* glibc: reinitialize, main() already parsed */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'n')
			ns = true;
		else if (c == 'j')
			json = true;
		else if (c == 'p')
			prom = optarg;
		else
			return csfcat_usage_error("cpu", "unknown option", argv[optind - 1]);
	}
	if (optind != argc)
		return csfcat_usage_error("cpu", "takes no arguments", NULL);
	if (prom && prom_check_dir("cpu", prom))
		return EXIT_FAILURE;

	n = csf_cpu_count();
	if (n < 0)
		return csfcat_map_error(CSF_CPU_FILE);
	rows = calloc((size_t)n + 1, sizeof(*rows));
	if (!rows || csf_cpu_snap_all(rows, n + 1, &mono_ns) < 0) {
		fprintf(stderr, "%s: cpu: %s\n", csfcat_prog, strerror(errno));
		free(rows);
		return EXIT_FAILURE;
	}
	if (json) {
		print_json(rows, n, mono_ns);
		free(rows);
		return prom ? write_prometheus(prom) : 0;
	}
	/* Like /proc/stat: the sum first, then only online CPUs. */
	div = ns ? 1 : 1000000000u / CSF_USER_HZ;
	for (int i = 0; i <= n; i++) {
		const struct csf_cpu_row *r = &rows[i];
		uint64_t v[10];

		if (i && !r->online)
			continue;
		row_values(r, v);
		if (i)
			printf("cpu%d", r->cpu);
		else
			printf("cpu ");
		for (int f = 0; f < 10; f++)
			printf(" %" PRIu64, v[f] / div);
		putchar('\n');
	}
	free(rows);
	return prom ? write_prometheus(prom) : 0;
}

const struct csfcat_cmd csfcat_cmd_cpu = {
	.name = "cpu",
	.args = "[--ns] [--json] [--prometheus FILE]",
	.help = "the cpu page in /proc/stat's format: the sum line, then one line per online\n"
		"CPU, in USER_HZ ticks (--ns: nanoseconds; --json: every CPU, in ns); --prometheus:\n"
		"write what node_exporter does not export (the page's refresh period) to FILE",
	.run = cmd_cpu,
};
