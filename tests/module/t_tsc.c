// SPDX-License-Identifier: GPL-2.0
/*
 * t_tsc: the page keeps counting across a large backwards TSC step, and the header says whether
 * the kernel trusts the TSC.
 *
 * Run in a guest booted with "tsc=unstable" (tests/debian/run.sh does, in a boot of its own):
 * the kernel then keeps time with another clocksource, so that stepping one CPU's TSC back
 * through /dev/cpu/1/msr (as unsynchronized sockets or a reset at resume would) breaks nothing
 * but what is tested here. The step is undone at the end.
 */
#include "../t.h"

#include <fcntl.h>
#include <unistd.h>

#define MS 1000000ull
#define MSR_IA32_TSC 0x10

/* "--expect-invariant": the header must flag the TSC invariant (argv, set in main()). */
static bool expect_invariant;

#if defined(__x86_64__)
static int msr_fd(int cpu)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
	return open(path, O_RDWR);
}

static int tsc_write(int fd, uint64_t v)
{
	return pwrite(fd, &v, sizeof(v), MSR_IA32_TSC) == sizeof(v) ? 0 : -1;
}

/* This CPU's TSC minus CPU 0's, from reads a few microseconds apart. */
static int64_t tsc_offset_from_cpu0(int cpu)
{
	uint64_t a, b;

	t_pin(0);
	a = csf_rdtsc();
	t_pin(cpu);
	b = csf_rdtsc();
	t_pin(0);
	return (int64_t)(b - a);
}

static uint64_t ns_of(const struct csf_snap *s, uint64_t cyc)
{
	return csf_cyc_to_ns(&s->p.hdr, cyc);
}

/* A descriptor's cleanup: closed however the scenario ends (REQUIRE and SKIP return). */
static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

/* The module's view of the TSC: trusted only when the kernel trusts it too. */
SCENARIO(invariant_flag, "the header claims an invariant TSC only when the kernel trusts it")
{
	char cmdline[512] = "";
	FILE *f = fopen("/proc/cmdline", "r");
	struct csf_snap a;
	bool unstable;

	REQUIRE(f && fgets(cmdline, sizeof(cmdline), f), "/proc/cmdline");
	fclose(f);
	unstable = strstr(cmdline, "tsc=unstable") != NULL;
	t_snap(&a);
	printf("#   tsc=unstable on the command line: %s; CSF_HDR_TSC_INVARIANT: %s\n",
	       unstable ? "yes" : "no", a.p.hdr.flags & CSF_HDR_TSC_INVARIANT ? "set" : "clear");
	if (unstable)
		CHECK(!(a.p.hdr.flags & CSF_HDR_TSC_INVARIANT),
		      "the kernel marked the TSC unstable, the page still says invariant");
	if (expect_invariant)
		CHECK(a.p.hdr.flags & CSF_HDR_TSC_INVARIANT, "invariant TSC not flagged");
}

SCENARIO(step_back, "a TSC 100 s behind on another CPU: the page resynchronizes and keeps counting")
{
	int fd __attribute__((cleanup(close_fd))) = msr_fd(1);
	struct csf_snap a, b, c;
	uint64_t step, sum;
	int64_t off;

	if (fd < 0)
		SKIP("no /dev/cpu/1/msr (%s): needs the msr module and two CPUs", strerror(errno));
	t_pin(0);
	t_snap(&a);
	step = 100 * a.p.hdr.tsc_hz;
	t_pin(1);
	REQUIRE(tsc_write(fd, csf_rdtsc() - step) == 0, "wrmsr: %s", strerror(errno));
	off = tsc_offset_from_cpu0(1);
	printf("#   CPU 1's TSC is now %.3f s behind CPU 0's\n", -(double)off / a.p.hdr.tsc_hz);
	if (off > -(int64_t)(step / 2)) {
		tsc_write(fd, csf_rdtsc() + step);
		SKIP("this CPU ignores writes to IA32_TSC");
	}

	/* On CPU 0 before the step; now 50 ms of sleep and 50 of spin on CPU 1. */
	t_snap(&a);
	t_pin(1);
	t_sleep_ns(50 * MS);
	t_spin_ns(50 * MS);
	t_snap(&b);
	t_print_diff("across the step (refused: start_tsc moved)", &a, &b);
	CHECK_EQ(b.p.tsc_resyncs, a.p.tsc_resyncs + 1);
	CHECK(b.p.start_tsc != a.p.start_tsc, "start_tsc did not move with the TSC");
	CHECK(b.extrapolated, "not extrapolated");
	/* Counting goes on: the buckets grew by the sleep and the spin. */
	sum = 0;
	for (int i = 0; i < CSF_NR_STATES; i++)
		sum += b.p.cyc[i] - a.p.cyc[i];
	printf("#   buckets grew by %.1f ms on CPU 1\n", ns_of(&b, sum) / 1e6);
	CHECK(ns_of(&b, b.p.oncpu_cyc - a.p.oncpu_cyc) >= 40 * MS, "cpu grew by %.1f ms, spun 50",
	      ns_of(&b, b.p.oncpu_cyc - a.p.oncpu_cyc) / 1e6);
	CHECK(ns_of(&b, b.p.sleep_cyc - a.p.sleep_cyc) >= 40 * MS,
	      "sleep grew by %.1f ms, slept 50", ns_of(&b, b.p.sleep_cyc - a.p.sleep_cyc) / 1e6);
	/* And the sum rule holds in the new origin. */
	sum = 0;
	for (int i = 0; i < CSF_NR_STATES; i++)
		sum += b.p.cyc[i];
	CHECK(sum == b.tsc - b.p.start_tsc, "buckets %llu, tsc - start %llu",
	      (unsigned long long)sum, (unsigned long long)(b.tsc - b.p.start_tsc));

	/* Within one CPU's TSC, diffs work again. */
	t_snap(&c);
	t_sleep_ns(20 * MS);
	t_snap(&b);
	t_print_diff("on CPU 1 after the resync", &c, &b);
	CHECK(t_diff(&c, &b).sleep >= 15, "sleep %.1f ms", t_diff(&c, &b).sleep);

	REQUIRE(tsc_write(fd, csf_rdtsc() + step) == 0, "undo the step: %s", strerror(errno));
	t_pin(0);
}

#else
SCENARIO(x86_only, "the TSC's steps and tsc=unstable: x86-64 only")
{
	SKIP("the TSC and IA32_TSC are x86-64's; this CPU's counter cannot be stepped from user space");
}
#endif

int main(int argc, char **argv)
{
	expect_invariant = argc > 1 && !strcmp(argv[1], "--expect-invariant");
	return t_main("t_tsc");
}
