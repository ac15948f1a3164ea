// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat fpu and fpu-report: their latency tables, laid out as sqlite3 -column lays out the
 * unmerged series' table (xsave-latency-trace.sh), then p50, p99 and the unit, and as JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "csfcat_fpu.h"
#include "json.h"

char *fpu_hex64(char *buf, size_t len, uint64_t v)
{
	snprintf(buf, len, "0x%" PRIx64, v);
	return buf;
}

void fpu_print_table(int ncols, size_t nrows, cells_fn fn, const void *ctx)
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
	fpu_hex64(c[k++], CELL, r->rfbm);
	fpu_hex64(c[k++], CELL, r->xinuse);
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

void fpu_print_rows(const struct fpu_table *t)
{
	fpu_print_table(strcmp(t->kind, "fpu") ? FPU_COLS - 1 : FPU_COLS, t->nrows, fpu_cells, t);
}

void fpu_json_rows(const struct fpu_table *t)
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
		json_str("rfbm", fpu_hex64(hex, sizeof(hex), r->rfbm));
		json_str("xinuse", fpu_hex64(hex, sizeof(hex), r->xinuse));
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
