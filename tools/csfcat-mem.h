/* SPDX-License-Identifier: GPL-2.0 */
/*
 * csfcat mem's metrics (csfcat-mem-metrics.c): DAMON_STAT's two figures computed from DAMON
 * regions, how far a bandwidth reading can be trusted, and the parsing of DAMON_STAT's
 * percentiles. No files, no output: csfcat-mem.c and the host test tests/t_mem_metrics.c link
 * the same code.
 */
#ifndef CSFCAT_MEM_H
#define CSFCAT_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEM_NR_PCT 101
/* DAMON_STAT's aggregation interval is 20 sampling intervals, a ratio its tuner keeps. */
#define MEM_STAT_SAMPLES_PER_AGGR 20
/* --watch judges DAMON_STAT's bandwidth by the largest of this many of its refreshes. */
#define MEM_BW_WINDOW 5

struct mem_region {
	uint64_t start, end;
	uint64_t nr_accesses, age;
};

struct mem_metrics {
	uint64_t bandwidth; /* bytes per second */
	int64_t idle_ms[MEM_NR_PCT];
	uint64_t accessed_bytes; /* in regions accessed in the last interval */
	/* The bandwidth's part from regions accessed in every sample: DAMON cannot see more. */
	uint64_t saturated_bandwidth;
};

/*
 * DAMON_STAT's metrics of regions r[0..n) (sorted by idle time in place): a region's idle time
 * is (age + 1) aggregation intervals, negative when it was accessed in the last one; percentile
 * p is the idle time of the region at which the bytes walked in idle-time order reach p% of all;
 * the bandwidth is sum(size * nr_accesses) per aggregation interval. sample_us 0: not known (no
 * saturated part).
 */
void mem_compute(struct mem_region *r, size_t n, uint64_t aggr_us, uint64_t sample_us,
		 struct mem_metrics *m);

/*
 * DAMON_STAT's memory_idle_ms_percentiles: 101 comma-separated integers. Returns 0, or -1 when
 * there are not 101 of them.
 */
int mem_parse_percentiles(const char *buf, int64_t *idle_ms);

/*
 * The share (0..100) of the monitored bytes accessed in the last interval, from the
 * percentiles: those below 0, or at 0 where the kernel writes accessed bytes as 0 (6.17).
 */
int mem_accessed_pct(const int64_t *idle_ms, bool accessed_negative);

/*
 * Whether a DAMON_STAT bandwidth reading bw is at least half of what DAMON can see: each byte
 * counts once per sampling interval (aggr_us / 20), so a loop faster than that reads as the
 * accessed bytes per sampling interval, however fast it runs. Then the reading is a lower bound.
 */
bool mem_stat_saturated(uint64_t bw, uint64_t bytes, int accessed_pct, uint64_t aggr_us);

/* The last MEM_BW_WINDOW bandwidth readings, each a different refresh. */
struct mem_bw_window {
	uint64_t v[MEM_BW_WINDOW];
	int n, next;
};

void mem_bw_push(struct mem_bw_window *w, uint64_t bw);
uint64_t mem_bw_max(const struct mem_bw_window *w);

#endif /* CSFCAT_MEM_H */
