// SPDX-License-Identifier: GPL-2.0
/*
 * t_mem_tune: the interval tuning csfcat does for our kdamond on kernels that cannot tune
 * (tools/csfcat_mem_tune.c, linked here as csfcat links it), against the kernel's arithmetic
 * (mm/damon/core.c, 6.15: damon_get_intervals_score(), damon_feed_loop_next_input(),
 * kdamond_tune_intervals()) worked by hand; and a model of a workload under sampling, on which
 * the loop must settle near DAMON_STAT's goal. A host test: no kernel, no root.
 */
#include "../t.h"

#include "../../tools/csfcat_mem.h"

#include <math.h>

#define MIB (1ull << 20)

/* DAMON_STAT's goal (mm/damon/stat.c). */
static const struct mem_tune_goal goal = {
	.access_bp = 400,
	.aggrs = 3,
	.min_sample_us = 5000,
	.max_sample_us = 10000000,
	.aggr_samples = 20,
};

SCENARIO(score, "the score: accessed samples by size against 4% of all, in basis points")
{
	/* 4 MiB seen in all 20 samples of 100 MiB: 4% of the possible samples, on the goal. */
	struct mem_region on[] = { { 0, 96 * MIB, 0, 7 }, { 96 * MIB, 100 * MIB, 20, 0 } };
	/* Size weighs in, not the count of regions: 1 MiB in every sample of 100 is 1%. */
	struct mem_region quarter[] = { { 0, 99 * MIB, 0, 0 }, { 99 * MIB, 100 * MIB, 20, 0 } };
	/* 2^52-byte regions: bytes times samples times 10^4 is past 64 bits. */
	struct mem_region big[] = { { 0, 1ull << 52, 20, 0 }, { 1ull << 52, 1ull << 53, 0, 0 } };

	CHECK_EQ(mem_tune_score_bp(on, 2, 20, 400), 10000);
	CHECK_EQ(mem_tune_score_bp(quarter, 2, 20, 400), 2500);
	CHECK_EQ(mem_tune_score_bp(on, 1, 20, 400), 0);
	/* No regions: the kernel's target of 0 becomes 1, and no accesses score 0. */
	CHECK_EQ(mem_tune_score_bp(on, 0, 20, 400), 0);
	/* Half of everything accessed: 50% is 12.5 times the goal. */
	CHECK_EQ(mem_tune_score_bp(big, 2, 20, 400), 125000);
}

SCENARIO(score_ge, "the score from per-count totals equals the score from the regions")
{
	struct mem_region r[64];
	uint64_t ge[21];
	unsigned int seed = 1;

	/* Random regions: sizes of 4 KiB to 64 MiB, accessed in 0 to 20 samples, often none. */
	for (int round = 0; round < 200; round++) {
		size_t n = 1 + (size_t)(rand_r(&seed) % 64);
		uint64_t at = 0;

		memset(ge, 0, sizeof(ge));
		for (size_t i = 0; i < n; i++) {
			uint64_t sz = 4096ull << (rand_r(&seed) % 15);
			uint64_t nr = rand_r(&seed) % 3 ? 0 : (uint64_t)(rand_r(&seed) % 21);

			r[i] = (struct mem_region){ at, at + sz, nr, 0 };
			at += sz;
			for (uint64_t k = 0; k <= nr; k++)
				ge[k] += sz;
		}
		CHECK_EQ(mem_tune_score_ge(ge, 20, 20, 400), mem_tune_score_bp(r, n, 20, 400));
	}
	/* Nothing monitored: no accesses, score 0, as the kernel's target of 0 becomes 1. */
	memset(ge, 0, sizeof(ge));
	CHECK_EQ(mem_tune_score_ge(ge, 20, 20, 400), 0);
}

SCENARIO(steps, "the next sampling interval: the kernel's feedback loop, rescaled and bounded")
{
	/* On the goal: no change. */
	CHECK_EQ(mem_tune_sample_us(100000, 10000, &goal), 100000);
	/* Nothing seen: the loop's input doubles (10^8 + 10^8), so the interval doubles. */
	CHECK_EQ(mem_tune_sample_us(5000, 0, &goal), 10000);
	/* Half the goal: input 1.5 * 10^8, the interval times 1.5. */
	CHECK_EQ(mem_tune_sample_us(100000, 5000, &goal), 150000);
	/* 1.5 times the goal: input 0.5 * 10^8, adaptation 5000 bp, rescaled to 7500. */
	CHECK_EQ(mem_tune_sample_us(100000, 15000, &goal), 75000);
	/* Twice the goal or more: the loop's least input, rescaled to halving at most. */
	CHECK_EQ(mem_tune_sample_us(100000, 20000, &goal), 50000);
	CHECK_EQ(mem_tune_sample_us(100000, 125000, &goal), 50000);
	/* The bounds: 5 ms to 10 s. */
	CHECK_EQ(mem_tune_sample_us(8000, 125000, &goal), 5000);
	CHECK_EQ(mem_tune_sample_us(8000000, 0, &goal), 10000000);
}

/*
 * A model of the test's workload: hot bytes written at a steady rate, the rest never. A sample
 * sees a hot page accessed when the loop came back to it since the last check: with the loop
 * passing over hot bytes every period_us, the chance is min(1, sample_us / period_us). The
 * expected share seen, in one aggregation interval, is hot/total of that chance.
 */
static uint64_t model_score(uint64_t sample_us, double hot_share, double period_us)
{
	double seen = fmin(1.0, (double)sample_us / period_us);
	/* One region holding the hot bytes, one the rest, with the expected count of samples. */
	uint64_t hot = (uint64_t)(hot_share * 1e9), nr = (uint64_t)llround(20 * seen);
	struct mem_region r[] = { { 0, hot, nr, 0 }, { hot, 1000000000, 0, 0 } };

	return mem_tune_score_bp(r, 2, 20, 400);
}

SCENARIO(settles, "on a modelled workload, the loop settles where DAMON would")
{
	/*
	 * 10% of memory hot, each hot page written every 800 ms: the goal (4% of samples seen) is
	 * reached where 40% of the hot samples see an access, at 320 ms. From 5 ms the loop must
	 * get there, within one step of the model's rounding, and stay.
	 */
	uint64_t s = goal.min_sample_us, lo = UINT64_MAX, hi = 0;

	for (int i = 0; i < 60; i++) {
		s = mem_tune_sample_us(s, model_score(s, 0.10, 800000), &goal);
		if (i >= 40) {
			lo = s < lo ? s : lo;
			hi = s > hi ? s : hi;
		}
	}
	printf("#   settled between %.1f and %.1f ms (goal 320 ms)\n", lo / 1e3, hi / 1e3);
	CHECK(lo >= 250000 && hi <= 400000, "settled between %" PRIu64 " and %" PRIu64 " us", lo,
	      hi);
	/* Everything hot and fast: the shortest interval. Nothing hot: the longest. */
	s = 100000;
	for (int i = 0; i < 20; i++)
		s = mem_tune_sample_us(s, model_score(s, 1.0, 1000), &goal);
	CHECK_EQ(s, goal.min_sample_us);
	for (int i = 0; i < 20; i++)
		s = mem_tune_sample_us(s, model_score(s, 0.0, 1000), &goal);
	CHECK_EQ(s, goal.max_sample_us);
}

int main(void)
{
	return t_main("t_mem_tune");
}
