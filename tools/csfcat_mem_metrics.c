// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat mem's metrics, as DAMON_STAT computes them (mm/damon/stat.c,
 * damon_stat_set_idletime_percentiles() and damon_stat_set_estimated_memory_bandwidth()), and
 * what a bandwidth reading is worth. Pure functions: tests/user/t_mem_metrics.c checks them on
 * fixed regions.
 */
#include <stdlib.h>

#include "csfcat_mem.h"

/* In aggregation intervals: hot (accessed in the last one) regions negative. */
static int64_t idle_intervals(const struct mem_region *r)
{
	return r->nr_accesses ? -(int64_t)(r->age + 1) : (int64_t)(r->age + 1);
}

static int cmp_idle(const void *a, const void *b)
{
	int64_t x = idle_intervals(a), y = idle_intervals(b);

	return x < y ? -1 : x > y;
}

/*
 * Percentile p is reached when the bytes walked reach p% of all (integer division, as the
 * kernel does it); the last region reaches 100%. 128-bit sums cannot overflow.
 */
void mem_compute(struct mem_region *r, size_t n, uint64_t aggr_us, uint64_t sample_us,
		 struct mem_metrics *m)
{
	unsigned __int128 total = 0, accessed = 0, saturated = 0, walked = 0;
	uint64_t full = sample_us ? aggr_us / sample_us : 0;
	int next = 0;

	for (int p = 0; p < MEM_NR_PCT; p++)
		m->idle_ms[p] = 0;
	m->accessed_bytes = 0;
	qsort(r, n, sizeof(*r), cmp_idle);
	for (size_t i = 0; i < n; i++) {
		uint64_t sz = r[i].end - r[i].start;

		total += sz;
		accessed += (unsigned __int128)sz * r[i].nr_accesses;
		if (full && r[i].nr_accesses >= full)
			saturated += (unsigned __int128)sz * r[i].nr_accesses;
		if (r[i].nr_accesses)
			m->accessed_bytes += sz;
	}
	m->bandwidth = aggr_us ? (uint64_t)(accessed * 1000000u / aggr_us) : 0;
	m->saturated_bandwidth = aggr_us ? (uint64_t)(saturated * 1000000u / aggr_us) : 0;
	for (size_t i = 0; i < n && total; i++) {
		walked += r[i].end - r[i].start;
		while (next < MEM_NR_PCT && (unsigned __int128)next <= walked * 100 / total)
			m->idle_ms[next++] = idle_intervals(&r[i]) * (int64_t)aggr_us / 1000;
	}
}

int mem_parse_percentiles(const char *buf, int64_t *idle_ms)
{
	const char *p = buf;

	for (int i = 0; i < MEM_NR_PCT; i++) {
		char *end;

		idle_ms[i] = strtoll(p, &end, 10);
		if (end == p || (i < MEM_NR_PCT - 1 ? *end != ',' : *end != 0))
			return -1;
		p = end + 1;
	}
	return 0;
}

int mem_accessed_pct(const int64_t *idle_ms, bool accessed_negative)
{
	int p = 0;

	while (p < MEM_NR_PCT && (accessed_negative ? idle_ms[p] < 0 : idle_ms[p] <= 0))
		p++;
	return p > 100 ? 100 : p;
}

bool mem_stat_saturated(uint64_t bw, uint64_t bytes, int accessed_pct, uint64_t aggr_us)
{
	/* The bytes accessed, to a percent; at least 1%, which a reading above 0 implies. */
	unsigned __int128 accessed =
		(unsigned __int128)bytes * (accessed_pct ? accessed_pct : 1) / 100;
	unsigned __int128 cap;

	if (!aggr_us || !bw)
		return false;
	cap = accessed * 1000000u * MEM_STAT_SAMPLES_PER_AGGR / aggr_us;
	return (unsigned __int128)bw * 2 >= cap;
}

void mem_bw_push(struct mem_bw_window *w, uint64_t bw)
{
	w->v[w->next] = bw;
	w->next = (w->next + 1) % MEM_BW_WINDOW;
	if (w->n < MEM_BW_WINDOW)
		w->n++;
}

uint64_t mem_bw_max(const struct mem_bw_window *w)
{
	uint64_t max = 0;

	for (int i = 0; i < w->n; i++)
		max = w->v[i] > max ? w->v[i] : max;
	return max;
}
