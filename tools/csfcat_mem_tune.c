// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat mem: DAMON's monitoring intervals auto-tuning, computed in user space for kernels that
 * cannot tune them (before 6.15: no intervals_goal). The arithmetic is the kernel's
 * (mm/damon/core.c: damon_get_intervals_score(), damon_feed_loop_next_input(),
 * damon_get_intervals_adaptation_bp(), kdamond_tune_intervals()), so that our kdamond on 6.12
 * settles where DAMON_STAT's would. csfcat_mem_sysfs.c reads the regions and commits the
 * result; the host test tests/user/t_mem_metrics.c checks the arithmetic.
 */
#include "csfcat_mem.h"

/* The kernel's damon_feed_loop_next_input(): a feedback loop aiming the score at 10000. */
static uint64_t feed_loop_next_input(uint64_t last_input, uint64_t score)
{
	const uint64_t goal = 10000, min_input = 10000;
	uint64_t diff, compensation;
	bool over = score > goal;

	if (score == goal)
		return last_input;
	if (score >= goal * 2)
		return min_input;
	diff = over ? score - goal : goal - score;
	if (last_input < UINT64_MAX / diff)
		compensation = last_input * diff / goal;
	else
		compensation = last_input / goal * diff;
	if (over)
		return last_input - compensation > min_input ? last_input - compensation :
							       min_input;
	if (last_input < UINT64_MAX - compensation)
		return last_input + compensation;
	return UINT64_MAX;
}

uint64_t mem_tune_score_bp(const struct mem_region *r, size_t n, uint64_t aggr_samples,
			   uint64_t goal_bp)
{
	/* In doubles: bytes times samples times 10000 overflows 64 bits past 80 TiB. */
	double events = 0, max_events = 0, target;

	for (size_t i = 0; i < n; i++) {
		double sz = (double)(r[i].end - r[i].start);

		max_events += sz * (double)aggr_samples;
		events += sz * (double)r[i].nr_accesses;
	}
	target = max_events * (double)goal_bp / 10000;
	if (target < 1)
		target = 1;
	return (uint64_t)(events * 10000 / target);
}

uint64_t mem_tune_score_ge(const uint64_t *ge, size_t max_k, uint64_t aggr_samples,
			   uint64_t goal_bp)
{
	double events = 0, target = (double)ge[0] * (double)aggr_samples * (double)goal_bp / 10000;

	/* A region accessed in n samples is in ge[1..n]: its size counts n times. */
	for (size_t k = 1; k <= max_k; k++)
		events += (double)ge[k];
	if (target < 1)
		target = 1;
	return (uint64_t)(events * 10000 / target);
}

uint64_t mem_tune_sample_us(uint64_t sample_us, uint64_t score_bp, const struct mem_tune_goal *goal)
{
	uint64_t adaptation_bp = feed_loop_next_input(100000000, score_bp) / 10000;
	uint64_t next;

	/* The kernel's rescaling of [1, 10000] to [5000, 10000]: shrink by half at most. */
	if (adaptation_bp <= 10000)
		adaptation_bp = 5000 + adaptation_bp / 2;
	if (adaptation_bp == 10000)
		return sample_us;
	next = sample_us * adaptation_bp / 10000;
	if (next > goal->max_sample_us)
		next = goal->max_sample_us;
	if (next < goal->min_sample_us)
		next = goal->min_sample_us;
	return next;
}
