// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat fpu-report --compare: two tables (the JSON of csfcat fpu or fpu-report) side by side,
 * with ratios.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "csfcat.h"
#include "csfcat_fpu.h"

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
	fpu_hex64(c[1], CELL, r->rfbm);
	if (a && b && a->xinuse != b->xinuse)
		snprintf(c[2], CELL, "0x%" PRIx64 "/0x%" PRIx64, a->xinuse, b->xinuse);
	else
		fpu_hex64(c[2], CELL, r->xinuse);
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
		json_str("rfbm", fpu_hex64(hex, sizeof(hex), r->rfbm));
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

int fpu_compare(const char *pa, const char *pb, bool json)
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
		fpu_print_table(CMP_COLS, pr.n, cmp_cells, &pr);
	}
	free(pr.p);
	ret = 0;
out:
	free(a.rows);
	free(b.rows);
	return ret;
}
