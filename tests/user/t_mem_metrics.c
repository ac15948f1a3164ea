// SPDX-License-Identifier: GPL-2.0
/*
 * t_mem_metrics: csfcat mem's metrics (tools/csfcat_mem_metrics.c, linked here as csfcat links
 * it) on fixed lists of regions whose percentiles and bandwidth are known by construction, as
 * DAMON_STAT computes them; the percentile walk's boundaries; percentiles that never decrease on
 * random regions; DAMON_STAT's percentiles parsed; a bandwidth reading judged. A host test: no
 * kernel, no root.
 */
#include "../t.h"

#include "../../tools/csfcat_mem.h"

#define MIB (1ull << 20)

static bool all_between(const int64_t *v, int from, int to, int64_t want, int *bad)
{
	for (int p = from; p <= to; p++) {
		if (v[p] != want) {
			*bad = p;
			return false;
		}
	}
	return true;
}

/* Percentiles p0..p100 must equal want[] where the runs of pct_to[] end. */
static void check_runs(const struct mem_metrics *m, const int *pct_to, const int64_t *want, int nr)
{
	int from = 0, bad = -1;

	for (int i = 0; i < nr; i++) {
		CHECK(all_between(m->idle_ms, from, pct_to[i], want[i], &bad),
		      "p%d = %lld ms, expected %lld (p%d..p%d)", bad, (long long)m->idle_ms[bad],
		      (long long)want[i], from, pct_to[i]);
		from = pct_to[i] + 1;
	}
}

SCENARIO(four_regions,
	 "four regions: percentiles at 10/20/50/100%, bandwidth, accessed and saturated")
{
	struct mem_metrics m;
	/*
	 * Unsorted, 100 MiB; aggregation 100 ms of 5 ms samples (20 a interval). In
	 * idle-time order: A (accessed, age 2: -3 intervals, 10 MiB), C (accessed, age 0: -1,
	 * 10 MiB), B (idle, age 9: 10, 30 MiB), D (idle, age 49: 50, 50 MiB).
	 */
	struct mem_region r[] = {
		{ 50 * MIB, 100 * MIB, 0, 49 }, /* D */
		{ 10 * MIB, 40 * MIB, 0, 9 }, /* B */
		{ 0, 10 * MIB, 20, 2 }, /* A: accessed in every sample */
		{ 40 * MIB, 50 * MIB, 5, 0 }, /* C */
	};
	const int to[] = { 10, 20, 50, 100 };
	const int64_t want[] = { -300, -100, 1000, 5000 };

	mem_compute(r, 4, 100000, 5000, &m);
	check_runs(&m, to, want, 4);
	/* (10 MiB * 20 + 10 MiB * 5) per 100 ms = 2500 MiB/s; A's part 2000 MiB/s. */
	CHECK_EQ(m.bandwidth, 2500 * MIB);
	CHECK_EQ(m.saturated_bandwidth, 2000 * MIB);
	CHECK_EQ(m.accessed_bytes, 20 * MIB);
	CHECK(r[0].nr_accesses == 20 && r[3].age == 49, "not sorted by idle time");
}

SCENARIO(walk_division,
	 "the walk's integer division: a third reaches p33, not p34; the last reaches p100")
{
	struct mem_metrics m;
	/* 1 byte accessed (idle -1), 2 bytes idle 5 intervals; aggregation 1 ms. */
	struct mem_region r[] = { { 10, 12, 0, 4 }, { 0, 1, 3, 0 } };
	const int to[] = { 33, 100 };
	const int64_t want[] = { -1, 5 };

	mem_compute(r, 2, 1000, 0, &m);
	check_runs(&m, to, want, 2);
	CHECK_EQ(m.bandwidth, 3000); /* 1 byte * 3 per ms */
	CHECK_EQ(m.saturated_bandwidth, 0); /* the sampling interval is not known */
}

SCENARIO(one_region, "one region: every percentile its idle time; none: all 0")
{
	struct mem_metrics m;
	struct mem_region r[] = { { 4096, 8192, 0, 7 } };
	const int to[] = { 100 };
	const int64_t want[] = { 800 };

	mem_compute(r, 1, 100000, 5000, &m);
	check_runs(&m, to, want, 1);
	CHECK_EQ(m.bandwidth, 0);
	mem_compute(r, 0, 100000, 5000, &m);
	check_runs(&m, to, (const int64_t[]){ 0 }, 1);
}

SCENARIO(no_overflow, "no overflow: 2^52-byte regions accessed 1000 times a 1 s interval")
{
	struct mem_metrics m;
	/* size * nr_accesses * 10^6 is past 64 bits; the bandwidth, 2^52 * 1000, is not. */
	struct mem_region r[] = { { 0, 1ull << 52, 1000, 0 }, { 1ull << 52, 1ull << 53, 0, 0 } };

	mem_compute(r, 2, 1000000, 1000, &m);
	CHECK_EQ(m.idle_ms[50], -1000);
	CHECK_EQ(m.idle_ms[51], 1000);
	CHECK_EQ(m.idle_ms[100], 1000);
	CHECK_EQ(m.bandwidth, (1ull << 52) * 1000);
	CHECK_EQ(m.saturated_bandwidth, (1ull << 52) * 1000);
}

SCENARIO(random_regions,
	 "random regions: percentiles never decrease, p0 the least idle, p100 the most")
{
	struct mem_metrics m;
	struct mem_region r[64];
	unsigned int seed = 12345;

	for (int round = 0; round < 200; round++) {
		int n = 1 + (int)(rand_r(&seed) % 64);
		int64_t lo = INT64_MAX, hi = INT64_MIN;
		int bad = 0;

		for (int i = 0; i < n; i++) {
			uint64_t start = (uint64_t)i << 30;

			r[i] = (struct mem_region){ start,
						    start + 4096ull * (1 + rand_r(&seed) % 4096),
						    rand_r(&seed) % 3 ? 0 : rand_r(&seed) % 21,
						    rand_r(&seed) % 1000 };
			int64_t idle = (int64_t)r[i].age + 1;

			idle = r[i].nr_accesses ? -idle : idle;
			lo = idle < lo ? idle : lo;
			hi = idle > hi ? idle : hi;
		}
		mem_compute(r, (size_t)n, 100000, 5000, &m);
		for (int p = 1; p <= 100 && !bad; p++)
			if (m.idle_ms[p] < m.idle_ms[p - 1])
				bad = p;
		CHECK(!bad, "round %d: p%d %lld < p%d %lld", round, bad, (long long)m.idle_ms[bad],
		      bad - 1, (long long)m.idle_ms[bad - 1]);
		CHECK(m.idle_ms[0] == lo * 100 && m.idle_ms[100] == hi * 100,
		      "round %d: p0 %lld, p100 %lld; least and most idle %lld, %lld ms", round,
		      (long long)m.idle_ms[0], (long long)m.idle_ms[100], (long long)lo * 100,
		      (long long)hi * 100);
		if (t_cur_failed)
			break;
	}
}

SCENARIO(stat_percentiles, "DAMON_STAT's percentiles: 101 signed values, nothing else")
{
	char buf[1024];
	int64_t v[MEM_NR_PCT];
	int k = 0;

	for (int p = 0; p < MEM_NR_PCT; p++)
		k += snprintf(buf + k, sizeof(buf) - (size_t)k, "%s%d", p ? "," : "", p * 10 - 100);
	CHECK_EQ(mem_parse_percentiles(buf, v), 0);
	CHECK(v[0] == -100 && v[10] == 0 && v[100] == 900, "%lld %lld %lld", (long long)v[0],
	      (long long)v[10], (long long)v[100]);
	snprintf(buf + k, sizeof(buf) - (size_t)k, ",5");
	CHECK_EQ(mem_parse_percentiles(buf, v), -1);
	*strrchr(buf, ',') = 0;
	*strrchr(buf, ',') = 0;
	CHECK_EQ(mem_parse_percentiles(buf, v), -1); /* 100 values */
	CHECK_EQ(mem_parse_percentiles("", v), -1);
}

SCENARIO(accessed_share, "the accessed share: negative percentiles (6.18 on), or those at 0 (6.17)")
{
	int64_t v[MEM_NR_PCT] = { 0 };

	for (int p = 0; p < MEM_NR_PCT; p++)
		v[p] = p < 7 ? -100 : 5000;
	CHECK_EQ(mem_accessed_pct(v, true), 7);
	for (int p = 0; p < MEM_NR_PCT; p++)
		v[p] = p < 3 ? 0 : 5000;
	CHECK_EQ(mem_accessed_pct(v, true), 0);
	CHECK_EQ(mem_accessed_pct(v, false), 3);
	for (int p = 0; p < MEM_NR_PCT; p++)
		v[p] = -1;
	CHECK_EQ(mem_accessed_pct(v, true), 100);
}

SCENARIO(bandwidth_judged,
	 "a bandwidth reading judged: saturated when near bytes accessed per sample")
{
	/*
	 * The guest on 7.2: 80 MiB/s read, 1% of 5 GiB accessed, intervals tuned to 16 s
	 * (800 ms samples): DAMON sees at most 51.2 MiB per 800 ms, 64 MiB/s. A lower bound.
	 */
	CHECK(mem_stat_saturated(80 * MIB, 5120 * MIB, 1, 16000000), "80 MiB/s of 64");
	CHECK(mem_stat_saturated(32 * MIB, 5120 * MIB, 1, 16000000), "half of it");
	CHECK(!mem_stat_saturated(31 * MIB, 5120 * MIB, 1, 16000000), "under half");
	/* 100 ms intervals (5 ms samples): 51.2 MiB per 5 ms is 10 GiB/s. */
	CHECK(!mem_stat_saturated(4096 * MIB, 5120 * MIB, 1, 100000), "4 GiB/s of 10");
	CHECK(mem_stat_saturated(7168 * MIB, 5120 * MIB, 1, 100000), "7 GiB/s of 10");
	/* Nothing accessed at the reading's time: still judged against 1%. */
	CHECK(mem_stat_saturated(80 * MIB, 5120 * MIB, 0, 16000000), "0%% accessed");
	CHECK(!mem_stat_saturated(80 * MIB, 5120 * MIB, 1, 0), "no interval, no judgment");
	CHECK(!mem_stat_saturated(0, 5120 * MIB, 1, 16000000), "0 is not saturated");
}

SCENARIO(watch_window, "--watch's window: the largest of the last 5 readings")
{
	struct mem_bw_window w = { 0 };
	const uint64_t v[] = { 900, 10, 20, 30, 40, 50, 5 };

	CHECK_EQ(mem_bw_max(&w), 0);
	mem_bw_push(&w, v[0]);
	CHECK(w.n == 1 && mem_bw_max(&w) == 900, "n %d max %llu", w.n,
	      (unsigned long long)mem_bw_max(&w));
	for (int i = 1; i < 5; i++)
		mem_bw_push(&w, v[i]);
	CHECK(w.n == 5 && mem_bw_max(&w) == 900, "n %d max %llu", w.n,
	      (unsigned long long)mem_bw_max(&w));
	mem_bw_push(&w, v[5]); /* 900 leaves */
	CHECK(w.n == 5 && mem_bw_max(&w) == 50, "n %d max %llu", w.n,
	      (unsigned long long)mem_bw_max(&w));
	mem_bw_push(&w, v[6]);
	CHECK_EQ(mem_bw_max(&w), 50);
}

int main(void)
{
	return t_main("t_mem_metrics");
}
