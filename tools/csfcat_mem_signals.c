// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat mem's stopping signals (csfcat_mem.h): SIGINT, SIGTERM, SIGHUP and SIGQUIT end a run
 * through its cleanup (our kdamond removed), then kill it as they would have; the sleeps between
 * reports are the only place they are delivered.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#include "csfcat_mem.h"
#include "util.h"

volatile sig_atomic_t mem_stop_sig;
static sigset_t sleep_mask; /* the mask to sleep with: the stopping signals unblocked */

double mem_mono_s(void)
{
	return (double)mono_ns() / 1e9;
}

bool mem_sleep_s(double s)
{
	double end = mem_mono_s() + s, left = s;

	/*
	 * One ppoll() at least, with no time left too: a signal that came during a sysfs write is
	 * delivered here, even when that write took longer than the sleep that follows it.
	 */
	do {
		struct timespec ts = { 0 };

		if (left > 0) {
			ts.tv_sec = (time_t)left;
			ts.tv_nsec = (long)((left - (double)(time_t)left) * 1e9);
		}
		ppoll(NULL, 0, &ts, &sleep_mask);
	} while (!mem_stop_sig && (left = end - mem_mono_s()) > 0);
	return !mem_stop_sig;
}

bool mem_stopping(void)
{
	return !mem_sleep_s(0);
}

static void on_signal(int sig)
{
	if (!mem_stop_sig)
		mem_stop_sig = sig;
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

void mem_catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block;

	sigemptyset(&block);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++) {
		sigaction(stop_signals[i], &sa, NULL);
		sigaddset(&block, stop_signals[i]);
	}
	/* A closed pipe must end the run through the cleanup, not kill it: EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_BLOCK, &block, &sleep_mask);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigdelset(&sleep_mask, stop_signals[i]);
}

void mem_reraise(void)
{
	sigset_t set;

	if (!mem_stop_sig)
		return;
	fflush(stdout);
	signal(mem_stop_sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, mem_stop_sig);
	raise(mem_stop_sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}
