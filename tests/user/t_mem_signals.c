// SPDX-License-Identifier: GPL-2.0
/*
 * t_mem_signals: csfcat mem's stopping signals (tools/csfcat_mem_signals.c, linked here as csfcat
 * links it). They stay blocked but in its sleeps, so one that comes during a sysfs write waits;
 * it must still be taken at the next sleep, however little time that sleep has left. A host
 * test: no kernel, no root.
 */
#include "../t.h"

#include "../../tools/csfcat_mem.h"

#include <signal.h>

SCENARIO(overdue_sleep, "a SIGTERM that came while blocked is taken by a sleep with no time left")
{
	/* A step that overran its time: the next sleep's length is negative. */
	raise(SIGTERM);
	CHECK_EQ(mem_stop_sig, 0);
	CHECK(!mem_sleep_s(-1.5), "mem_sleep_s(-1.5) did not see the SIGTERM waiting");
	CHECK_EQ(mem_stop_sig, SIGTERM);
}

SCENARIO(stopping, "mem_stopping() takes a waiting SIGINT, and is false with none")
{
	mem_stop_sig = 0;
	CHECK(!mem_stopping(), "stopping with no signal");
	raise(SIGINT);
	CHECK(mem_stopping(), "mem_stopping() did not see the SIGINT waiting");
	CHECK_EQ(mem_stop_sig, SIGINT);
}

int main(void)
{
	mem_catch_signals();
	return t_main("t_mem_signals");
}
