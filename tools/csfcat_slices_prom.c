// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat slices --prometheus FILE: the long slices csfcat has followed, as counters by
 * scheduling class and their lengths as a histogram, for node_exporter's textfile collector.
 * The metrics are described in docs/prometheus.md, "csfcat slices".
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "csfcat_slices.h"
#include "prom.h"
#include "util.h"

/* The class field's values (docs/slices.md, "The slices file"); the last catches the rest. */
static const char *const classes[] = { "stop", "deadline", "rt", "fair", "ext", "unknown" };

/* Upper bounds of the histogram's buckets, in ms: around the thresholds people set. */
static const unsigned int bucket_ms[] = { 1,   2,   5,	  10,	20,   50,   100,
					  200, 500, 1000, 2000, 5000, 10000 };

static struct {
	uint64_t count, sum_ns;
	uint64_t buckets[ARRAY_SIZE(bucket_ms)]; /* slices no longer than bucket_ms[i] */
} by_class[ARRAY_SIZE(classes)];
static uint64_t lost;

void slices_prom_count(const char *class, uint64_t len_ns)
{
	size_t c = 0;

	while (c < ARRAY_SIZE(classes) - 1 && strcmp(classes[c], class) != 0)
		c++;
	by_class[c].count++;
	by_class[c].sum_ns += len_ns;
	for (size_t b = 0; b < ARRAY_SIZE(bucket_ms); b++) {
		if (len_ns <= (uint64_t)bucket_ms[b] * 1000000)
			by_class[c].buckets[b]++;
	}
}

void slices_prom_lost(uint64_t n)
{
	lost += n;
}

int slices_prom_write(const char *path)
{
	long long warn_us = file_read_ll(SLICES_WARN_PARAM);
	struct prom_file p;

	if (prom_begin(&p, SLICES_CMD, path))
		return -1;
	prom_family(
		&p, "csfcat_long_slices_total", "counter",
		"CPU time slices longer than slice_warn_us that have ended, by scheduling class, "
		"since csfcat slices started.");
	for (size_t c = 0; c < ARRAY_SIZE(classes); c++)
		fprintf(p.f, "csfcat_long_slices_total{class=\"%s\"} %" PRIu64 "\n", classes[c],
			by_class[c].count);
	prom_family(&p, "csfcat_long_slice_duration_seconds", "histogram",
		    "Wall-clock lengths of those slices, from the switch in to the switch out.");
	for (size_t c = 0; c < ARRAY_SIZE(classes); c++) {
		for (size_t b = 0; b < ARRAY_SIZE(bucket_ms); b++)
			fprintf(p.f,
				"csfcat_long_slice_duration_seconds_bucket{class=\"%s\",le=\"%g\"} "
				"%" PRIu64 "\n",
				classes[c], bucket_ms[b] / 1000.0, by_class[c].buckets[b]);
		fprintf(p.f,
			"csfcat_long_slice_duration_seconds_bucket{class=\"%s\",le=\"+Inf\"} %" PRIu64
			"\n"
			"csfcat_long_slice_duration_seconds_sum{class=\"%s\"} %.9f\n"
			"csfcat_long_slice_duration_seconds_count{class=\"%s\"} %" PRIu64 "\n",
			classes[c], by_class[c].count, classes[c], by_class[c].sum_ns / 1e9,
			classes[c], by_class[c].count);
	}
	prom_family(&p, "csfcat_slice_reports_lost_total", "counter",
		    "Reports the kernel dropped before csfcat slices read them (its buffer holds "
		    "256): slices these counters miss.");
	fprintf(p.f, "csfcat_slice_reports_lost_total %" PRIu64 "\n", lost);
	/* The threshold now; left out while it cannot be read (the module was unloaded). */
	if (warn_us >= 0) {
		prom_family(
			&p, "csfcat_slice_threshold_seconds", "gauge",
			"The long-slice watch's threshold (slice_warn_us); 0: the watch is off.");
		fprintf(p.f, "csfcat_slice_threshold_seconds %.6f\n", warn_us / 1e6);
	}
	return prom_commit(&p);
}
