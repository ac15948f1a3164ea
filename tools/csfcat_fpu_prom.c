// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat fpu --prometheus FILE: the calibrated table as gauges labelled by instruction, RFBM
 * and XINUSE state, for node_exporter's textfile collector. The metrics are described in
 * docs/prometheus.md, "csfcat fpu".
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "csfcat_fpu.h"
#include "prom.h"
#include "util.h"

int fpu_prom_write(const char *path, const struct fpu_table *t)
{
	static const char *const stats[] = { "min", "p50", "p99", "max", "mean" };
	double hz = (double)t->tsc_khz * 1000.0;
	char cpu_model[sizeof(t->cpu_model) * 2], microcode[sizeof(t->microcode) * 2];
	char rfbm[24];
	struct prom_file p;

	if (prom_begin(&p, "fpu", path))
		return -1;
	prom_family(&p, "csfcat_fpu_info", "gauge",
		    "Where the table was measured: the CPU, its microcode, the kernel's own save "
		    "and restore instructions; always 1.");
	fprintf(p.f,
		"csfcat_fpu_info{cpu=\"%" PRId64 "\",cpu_model=\"%s\",microcode=\"%s\","
		"kernel_save=\"%s\",kernel_restore=\"%s\"} 1\n",
		t->cpu, prom_label(t->cpu_model, cpu_model, sizeof(cpu_model)),
		prom_label(t->microcode, microcode, sizeof(microcode)), t->kernel_save,
		t->kernel_restore);
	prom_family(&p, "csfcat_fpu_tsc_hertz", "gauge",
		    "The TSC's frequency, which converts the table's cycles to seconds.");
	fprintf(p.f, "csfcat_fpu_tsc_hertz %.0f\n", hz);
	prom_family(&p, "csfcat_fpu_measured_timestamp_seconds", "gauge",
		    "When the table was measured (Unix time).");
	fprintf(p.f, "csfcat_fpu_measured_timestamp_seconds %lld\n", (long long)time(NULL));
	prom_family(&p, "csfcat_fpu_samples", "gauge", "Samples behind each row of the table.");
	fprintf(p.f, "csfcat_fpu_samples %" PRIu64 "\n", t->samples);
	/* Without the TSC's frequency there are no seconds: the rows are left out. */
	if (!t->tsc_khz)
		return prom_commit(&p);
	prom_family(&p, "csfcat_fpu_latency_seconds", "gauge",
		    "One XSAVE-family instruction's latency, by instruction, requested-feature "
		    "bitmap (RFBM), state of the components (init or modified) and statistic.");
	for (size_t r = 0; r < t->nrows; r++) {
		const struct fpu_row *row = &t->rows[r];
		const uint64_t v[] = { row->min, row->p50, row->p99, row->max, row->avg };

		fpu_hex64(rfbm, sizeof(rfbm), row->rfbm);
		for (size_t s = 0; s < ARRAY_SIZE(stats); s++)
			fprintf(p.f,
				"csfcat_fpu_latency_seconds{instruction=\"%s\",rfbm=\"%s\","
				"state=\"%s\",statistic=\"%s\"} %.3e\n",
				row->event, rfbm, row->state, stats[s], (double)v[s] / hz);
	}
	return prom_commit(&p);
}
