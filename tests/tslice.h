/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tslice.h: what the long-slice watch's reports may say of the tasks waiting on a CPU, for
 * t_slice and t_hotplug_watch; and the slice the end-to-end tests make it report (t_e2e,
 * t_services).
 */
#ifndef CSF_TESTS_TSLICE_H
#define CSF_TESTS_TSLICE_H

#include "t.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/utsname.h>

/* A PREEMPT_RT kernel: its interrupts run in threads, which may wait on any CPU too. */
static inline bool t_preempt_rt(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.version, "PREEMPT_RT");
}

/*
 * A report's waiting count, n tasks known to wait behind the slice: the module reads it from
 * the runqueue at the offset BTF gives, so it is -1 where the kernel has no BTF (the debug
 * suite's), n where it has, or more on PREEMPT_RT (its interrupt threads). One more is allowed
 * elsewhere: a per-CPU kworker (vmstat's, every second) woken on that CPU during the spin waits
 * too, and was seen once in a 7.3 guest.
 */
static inline bool t_waiting_ok(int waiting, int n)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return waiting == -1;
	return t_preempt_rt() ? waiting >= n : waiting == n || waiting == n + 1;
}

/*
 * A thread body: 100 ms on CPU 1 as SCHED_FIFO, which a 50 ms threshold reports once in class
 * rt. Returns non-NULL when the policy could not be set.
 */
static inline void *t_fifo_spin_100ms(void *arg)
{
	struct sched_param sp = { .sched_priority = 20 };
	uint64_t t0;

	(void)arg;
	t_pin(1);
	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		return (void *)1;
	t0 = mono_ns();
	while (mono_ns() - t0 < 100000000ull)
		;
	return NULL;
}

#endif /* CSF_TESTS_TSLICE_H */
