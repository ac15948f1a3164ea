// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat mem's reports (csfcat_mem.h): as text, as JSON (--json), and as a node_exporter
 * textfile (--prometheus), whichever source they come from.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csfcat.h"
#include "csfcat_mem.h"
#include "prom.h"
#include "util.h"

/* A kdamond this busy (ms of CPU per s) likely falls behind its sampling interval. */
#define LAGGING_CPU_MS_PER_S 300.0

static const int compact_pcts[] = { 0, 25, 50, 75, 90, 99, 100 };

static const char *mib(uint64_t bytes, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f MiB", (double)bytes / 1048576.0);
	return buf;
}

static void print_pct_row(const struct mem_report *m, const int *pcts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%s p%d %.3f", i ? " " : "", pcts[i],
		       (double)m->met.idle_ms[pcts[i]] / 1000.0);
	putchar('\n');
}

static void print_text(const struct mem_report *m, const struct mem_opts *o)
{
	char b1[32], since[160];

	if (!strcmp(m->source, "damon_stat") && m->kdamond > 0)
		printf("source: DAMON_STAT, the kernel's own monitor (kdamond pid %d)\n",
		       m->kdamond);
	else if (!strcmp(m->source, "damon_stat"))
		printf("source: DAMON_STAT, the kernel's own monitor (kdamond pid not known)\n");
	else
		printf("source: our own kdamond through DAMON sysfs (kdamond pid %d, removed on "
		       "exit)\n",
		       m->kdamond);
	if (m->monitored_s >= 0)
		snprintf(since, sizeof(since), "for %.1f s", m->monitored_s);
	else
		snprintf(since, sizeof(since), "for how long not known (%s)", m->monitored_note);
	if (m->target)
		printf("monitored: process %d, virtual 0x%" PRIx64 "-0x%" PRIx64
		       ", %s in %u ranges, %s\n",
		       m->target, m->start, m->end, mib(m->bytes, b1, sizeof(b1)), m->nr_ranges,
		       since);
	else
		printf("monitored: physical memory 0x%" PRIx64 "-0x%" PRIx64 ", %s (%s), %s\n",
		       m->start, m->end, mib(m->bytes, b1, sizeof(b1)), m->range_note, since);
	if (!m->aggr_us)
		printf("aggregation interval: not known (this kernel's DAMON_STAT has no "
		       "aggr_interval_us; 6.18 added it)\n");
	else if (m->sample_us)
		printf("aggregation interval: %.3f s (sampling %.1f ms, %s)\n",
		       (double)m->aggr_us / 1e6, (double)m->sample_us / 1e3,
		       m->tuning == MEM_TUNE_KERNEL ? "auto-tuned" :
		       m->tuning == MEM_TUNE_CSFCAT ? "tuned by csfcat as 6.15's DAMON would" :
						      "fixed: --tune off");
	else
		printf("aggregation interval: %.3f s (auto-tuned)\n", (double)m->aggr_us / 1e6);
	if (m->nr_regions)
		printf("regions: %u\n", m->nr_regions);
	printf("estimated bandwidth: %.1f MiB/s%s%s%s\n", (double)m->met.bandwidth / 1048576.0,
	       m->bw_note[0] ? " (" : "", m->bw_note, m->bw_note[0] ? ")" : "");
	if (m->cpu_ms_per_s >= 0)
		printf("kdamond CPU time: %.2f ms per s, %s %.1f s\n", m->cpu_ms_per_s,
		       m->cpu_since_start ? "since it started" : "over the last", m->cpu_window_s);
	if (m->accessed_negative)
		printf("idle time (s; negative: accessed in the last interval, for that long):\n");
	else
		printf("idle time (s; 0: accessed in the last interval; this kernel's DAMON_STAT "
		       "does not say for how long):\n");
	if (o->all) {
		for (int p = 0; p < MEM_NR_PCT; p += 10) {
			int row[10], n = 0;

			for (int q = p; q < p + 10 && q < MEM_NR_PCT; q++)
				row[n++] = q;
			print_pct_row(m, row, (size_t)n);
		}
	} else {
		print_pct_row(m, compact_pcts, ARRAY_SIZE(compact_pcts));
	}
	if (m->note)
		printf("note: %s\n", m->note);
	/* DAMON counts time in intervals: one that cannot keep its pace counts fewer than passed. */
	if (m->cpu_ms_per_s >= LAGGING_CPU_MS_PER_S)
		printf("note: the kdamond used %.0f%% of a CPU and may not keep its sampling interval: "
		       "then idle times fall short of the time that passed\n",
		       m->cpu_ms_per_s / 10);
	fflush(stdout);
}

static void print_json(const struct mem_report *m, const struct mem_opts *o)
{
	char key[8];

	json_begin(NULL);
	json_str("source", m->source);
	json_str("ops", m->ops);
	json_i64("kdamond_pid", m->kdamond);
	if (m->target)
		json_i64("pid", m->target);
	json_u64("start", m->start);
	json_u64("end", m->end);
	json_u64("monitored_bytes", m->bytes);
	if (m->monitored_s >= 0)
		json_u64("monitored_ms", (uint64_t)(m->monitored_s * 1000));
	if (m->aggr_us)
		json_u64("aggr_interval_us", m->aggr_us);
	if (m->sample_us)
		json_u64("sample_interval_us", m->sample_us);
	json_bool("auto_tuned", m->tuned);
	json_str("tuned_by", m->tuning == MEM_TUNE_KERNEL ? "kernel" :
			     m->tuning == MEM_TUNE_CSFCAT ? "csfcat" :
							    "none");
	if (m->nr_regions)
		json_u64("nr_regions", m->nr_regions);
	json_u64("bandwidth_bytes_per_s", m->met.bandwidth);
	json_bool("bandwidth_trusted", m->bw_trusted);
	if (m->bw_window_n) {
		json_u64("bandwidth_window_max_bytes_per_s", m->bw_window_max);
		json_u64("bandwidth_window_readings", (uint64_t)m->bw_window_n);
	}
	json_bool("accessed_negative", m->accessed_negative);
	if (m->cpu_ms_per_s >= 0) {
		json_double("kdamond_cpu_ms_per_s", m->cpu_ms_per_s, 3);
		json_double("kdamond_cpu_window_s", m->cpu_window_s, 1);
		if (m->self_ms_per_s >= 0)
			json_double("csfcat_cpu_ms_per_s", m->self_ms_per_s, 3);
	}
	json_begin("idle_ms");
	for (int p = 0; p < MEM_NR_PCT; p++) {
		bool want = o->all;

		for (size_t i = 0; i < ARRAY_SIZE(compact_pcts) && !want; i++)
			want = compact_pcts[i] == p;
		if (!want)
			continue;
		snprintf(key, sizeof(key), "p%d", p);
		json_i64(key, m->met.idle_ms[p]);
	}
	json_end();
	json_end();
	json_flush();
}

/* The report for node_exporter's textfile collector (docs/prometheus.md, "csfcat mem"). */
static int write_prometheus(const char *path, const struct mem_report *m)
{
	struct prom_file p;
	char labels[96];
	FILE *f;

	if (prom_begin(&p, MEM_CMD, path))
		return -1;
	f = p.f;
	if (m->target)
		snprintf(labels, sizeof(labels), "source=\"%s\",pid=\"%d\"", m->source, m->target);
	else
		snprintf(labels, sizeof(labels), "source=\"%s\"", m->source);
	prom_family(&p, "csfcat_memory_idle_seconds", "gauge",
		    "Per-byte memory idle time percentiles from DAMON; negative: accessed in the "
		    "last aggregation interval, for that long.");
	for (int i = 0; i < MEM_NR_PCT; i++)
		fprintf(f, "csfcat_memory_idle_seconds{%s,percentile=\"%d\"} %.3f\n", labels, i,
			(double)m->met.idle_ms[i] / 1000.0);
	prom_family(&p, "csfcat_memory_bandwidth_bytes_per_second", "gauge",
		    "Estimated memory bandwidth from DAMON.");
	fprintf(f, "csfcat_memory_bandwidth_bytes_per_second{%s} %" PRIu64 "\n", labels,
		m->met.bandwidth);
	/* What the kernel does not give is left out, not written as 0. */
	if (m->aggr_us) {
		prom_family(&p, "csfcat_memory_aggregation_interval_seconds", "gauge",
			    "DAMON's aggregation interval.");
		fprintf(f, "csfcat_memory_aggregation_interval_seconds{%s} %.6f\n", labels,
			(double)m->aggr_us / 1e6);
	}
	prom_family(&p, "csfcat_memory_monitored_bytes", "gauge",
		    "Bytes of memory DAMON monitors.");
	fprintf(f, "csfcat_memory_monitored_bytes{%s} %" PRIu64 "\n", labels, m->bytes);
	if (m->monitored_s >= 0) {
		prom_family(&p, "csfcat_memory_monitored_seconds", "gauge",
			    "How long DAMON has monitored them.");
		fprintf(f, "csfcat_memory_monitored_seconds{%s} %.1f\n", labels, m->monitored_s);
	}
	return prom_commit(&p);
}

bool mem_print_report(const struct mem_report *m, const struct mem_opts *o)
{
	if (o->json)
		print_json(m, o);
	else
		print_text(m, o);
	if (ferror(stdout)) {
		mem_err("writing the report: %s", strerror(errno));
		return false;
	}
	return !o->prom || !write_prometheus(o->prom, m);
}
