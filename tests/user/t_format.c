// SPDX-License-Identifier: GPL-2.0
/*
 * t_format: csf_format_diff() on snapshots made up here: its exact output, rounding, the
 * longest possible line, truncation and refusals. No kernel needed.
 */
#include "../t.h"

/* A 1 GHz TSC: one cycle is one ns, exactly (mult 2^31, shift 31). */
static void snap_init(struct csf_snap *s, uint64_t tsc)
{
	memset(s, 0, sizeof(*s));
	s->p.hdr.magic = CSF_MAGIC;
	s->p.hdr.tsc_hz = 1000000000;
	s->p.hdr.cyc2ns_mult = 1u << 31;
	s->p.hdr.cyc2ns_shift = 31;
	s->tsc = tsc;
	s->extrapolated = true;
}

SCENARIO(spec_line, "the spec's line, from the spec's numbers")
{
	struct csf_snap a, b;
	char buf[CSF_DIFF_BUFSZ];
	int n;

	snap_init(&a, 1000);
	snap_init(&b, 1000 + 25119000);
	b.p.oncpu_cyc = 17000;
	b.p.sleep_cyc = 25102000;
	b.p.nr_block = 1;
	b.p.min_flt = 4;
	n = csf_format_diff(buf, sizeof(buf), &a, &b);
	CHECK(!strcmp(buf, "wall 25.119ms = cpu 0.017 + runq 0.000 + sleep 25.102 + dsleep "
			   "0.000 + iowait 0.000 | preempt 0 block 1 migrate 0 | flt 4/0 | "
			   "sysc r0 w0 | io r0B w0B"),
	      "got: %s", buf);
	CHECK_EQ(n, strlen(buf));
}

SCENARIO(every_field, "every field lands in its place, as a difference")
{
	struct csf_snap a, b;
	char buf[CSF_DIFF_BUFSZ];

	snap_init(&a, 5000);
	snap_init(&b, 5000 + 10000000);
	a.p.nr_preempt = 10;
	b.p.nr_preempt = 13;
	b.p.oncpu_cyc = 1000000;
	b.p.runq_cyc = 2000000;
	b.p.sleep_cyc = 3000000;
	b.p.dsleep_cyc = 1500000;
	b.p.iowait_cyc = 2500000;
	b.p.nr_block = 5;
	b.p.nr_migrate = 2;
	b.p.min_flt = 7;
	b.p.maj_flt = 1;
	b.p.syscr = 11;
	b.p.syscw = 12;
	b.p.rchar = 4096;
	b.p.wchar = 100;
	b.p.read_bytes = 999; /* storage bytes are not what "io" shows */
	csf_format_diff(buf, sizeof(buf), &a, &b);
	CHECK(!strcmp(buf, "wall 10.000ms = cpu 1.000 + runq 2.000 + sleep 3.000 + dsleep "
			   "1.500 + iowait 2.500 | preempt 3 block 5 migrate 2 | flt 7/1 | "
			   "sysc r11 w12 | io r4096B w100B"),
	      "got: %s", buf);
}

SCENARIO(rounding, "times round to the nearest microsecond")
{
	struct csf_snap a, b;
	char buf[CSF_DIFF_BUFSZ];

	snap_init(&a, 0);
	snap_init(&b, 1499);
	b.p.oncpu_cyc = 499;
	b.p.runq_cyc = 500;
	b.p.sleep_cyc = 500;
	csf_format_diff(buf, sizeof(buf), &a, &b);
	CHECK(!strncmp(buf, "wall 0.001ms = cpu 0.000 + runq 0.001 + sleep 0.001 + ", 54),
	      "got: %s", buf);
}

SCENARIO(longest_line, "the longest line, every field at its maximum, fits CSF_DIFF_BUFSZ")
{
	struct csf_snap a, b;
	char buf[CSF_DIFF_BUFSZ];
	int n;

	snap_init(&a, 0);
	snap_init(&b, UINT64_MAX);
	for (int i = 0; i < CSF_NR_STATES; i++)
		b.p.cyc[i] = UINT64_MAX;
	b.p.nr_preempt = b.p.nr_block = b.p.nr_migrate = UINT64_MAX;
	b.p.min_flt = b.p.maj_flt = b.p.syscr = b.p.syscw = UINT64_MAX;
	b.p.rchar = b.p.wchar = UINT64_MAX;
	n = csf_format_diff(buf, sizeof(buf), &a, &b);
	printf("#   %d characters: %s\n", n, buf);
	CHECK_EQ(n, strlen(buf));
	CHECK(n > 0 && n < CSF_DIFF_BUFSZ, "%d characters for a buffer of %d", n, CSF_DIFF_BUFSZ);
	/* 18-character times, 20-digit counters: the bound the header documents. */
	CHECK(strstr(buf, "wall 18446744073709.552ms = cpu 18446744073709.552 + ") == buf,
	      "times: %s", buf);
	CHECK(strstr(buf, "| io r18446744073709551615B w18446744073709551615B"), "counters: %s",
	      buf);
	CHECK_EQ(n, 396);
}

SCENARIO(short_buffer, "a short buffer gets a truncated, terminated line and ENOSPC")
{
	struct csf_snap a, b;
	char small[20];

	memset(small, 'x', sizeof(small));
	snap_init(&a, 1000);
	snap_init(&b, 1000 + 25119000);
	CHECK_ERRNO(csf_format_diff(small, sizeof(small), &a, &b), ENOSPC);
	CHECK(!strcmp(small, "wall 25.119ms = cpu"), "got: %.20s", small);
	CHECK_ERRNO(csf_format_diff(small, 0, &a, &b), ENOSPC);
}

SCENARIO(different_pages, "snapshots of different pages are refused with EINVAL")
{
	struct csf_snap a, b;
	char buf[CSF_DIFF_BUFSZ];

	snap_init(&a, 1000);
	snap_init(&b, 2000);
	b.p.start_tsc = 500; /* reset in between */
	CHECK_ERRNO(csf_format_diff(buf, sizeof(buf), &a, &b), EINVAL);
	b.p.start_tsc = 0;
	b.p.tid = 42; /* another thread */
	CHECK_ERRNO(csf_format_diff(buf, sizeof(buf), &a, &b), EINVAL);
}

int main(void)
{
	return t_main("t_format");
}
