// SPDX-License-Identifier: GPL-2.0
/*
 * t_prom: csfcat's Prometheus files (--prometheus FILE of cpu, slices, fpu and mem), written by
 * the writers csfcat links (tools/prom.c, tools/csfcat_*_prom.c), linked here the same way, on
 * made-up inputs: the values and labels they must hold, the histogram's rules, the atomic
 * replacement, and Prometheus's own "promtool check metrics" on each file. A host test: no
 * kernel, no root. CSF_PROMTOOL=required (make lint) fails where promtool is missing rather than
 * skipping that scenario.
 */
#include "../t.h"
#include "../../tools/csfcat.h"
#include "../../tools/csfcat_fpu.h"
#include "../../tools/csfcat_slices.h"
#include "../../tools/prom.h"

#include <sys/stat.h>
#include <unistd.h>

const char *csfcat_prog = "t_prom";

#define PROM_DIR "/tmp/t_prom.d"

/* The file's text, NUL-terminated, in a buffer of the program's. */
static char text[65536];

static const char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
	}
	text[n] = 0;
	return text;
}

#define HAS(s) CHECK(strstr(text, s), "missing: %s", s)
#define HASNT(s) CHECK(!strstr(text, s), "should not hold: %s", s)

static void fresh_dir(void)
{
	if (system("rm -rf " PROM_DIR " && mkdir -p " PROM_DIR))
		t_die("making " PROM_DIR);
}

/* The dir holds path's file and no hidden one left behind. */
static int files_in_dir(void)
{
	char out[4096];

	t_run("ls -A " PROM_DIR " | wc -l", out, sizeof(out));
	return atoi(out);
}

/* The four writers' files, as a Prometheus server would scrape them. */
static void write_slices(void)
{
	slices_prom_count("fair", 3000000); /* 3 ms */
	slices_prom_count("rt", 100000000); /* 100 ms, twice */
	slices_prom_count("rt", 100000000);
	slices_prom_count("rt", 50000000); /* exactly 50 ms: in the le="0.05" bucket */
	slices_prom_count("no-such-class", 20000000);
	slices_prom_lost(7);
	if (slices_prom_write(PROM_DIR "/slices.prom"))
		t_die("slices_prom_write");
}

static struct fpu_row rows[] = {
	{ .event = "XSAVES",
	  .kernel = true,
	  .state = "modified",
	  .rfbm = 0x3,
	  .min = 40,
	  .p50 = 100,
	  .p99 = 150,
	  .max = 900,
	  .avg = 110 },
	{ .event = "XRSTORS",
	  .kernel = true,
	  .state = "init",
	  .rfbm = 0x207,
	  .min = 50,
	  .p50 = 60,
	  .p99 = 70,
	  .max = 80,
	  .avg = 61 },
};

static void write_fpu(void)
{
	struct fpu_table t = { .kind = "fpu",
			       .unit = "cycles",
			       .cpu = 1,
			       .cpu_model = "Odd \"CPU\" \\ 9",
			       .microcode = "0x2b",
			       .kernel_save = "XSAVES",
			       .kernel_restore = "XRSTORS",
			       .tsc_khz = 1000000,
			       .samples = 1000,
			       .rows = rows,
			       .nrows = ARRAY_SIZE(rows) };

	if (fpu_prom_write(PROM_DIR "/fpu.prom", &t))
		t_die("fpu_prom_write");
}

SCENARIO(slices, "slices: counters by class, a cumulative histogram, lost reports")
{
	fresh_dir();
	write_slices();
	slurp(PROM_DIR "/slices.prom");
	HAS("# TYPE csfcat_long_slices_total counter\n");
	HAS("csfcat_long_slices_total{class=\"rt\"} 3\n");
	HAS("csfcat_long_slices_total{class=\"fair\"} 1\n");
	HAS("csfcat_long_slices_total{class=\"deadline\"} 0\n");
	/* A class csfcat does not know is counted, as unknown. */
	HAS("csfcat_long_slices_total{class=\"unknown\"} 1\n");
	HASNT("no-such-class");
	HAS("# TYPE csfcat_long_slice_duration_seconds histogram\n");
	HAS("csfcat_long_slice_duration_seconds_bucket{class=\"rt\",le=\"0.02\"} 0\n");
	HAS("csfcat_long_slice_duration_seconds_bucket{class=\"rt\",le=\"0.05\"} 1\n");
	HAS("csfcat_long_slice_duration_seconds_bucket{class=\"rt\",le=\"0.1\"} 3\n");
	HAS("csfcat_long_slice_duration_seconds_bucket{class=\"rt\",le=\"10\"} 3\n");
	HAS("csfcat_long_slice_duration_seconds_bucket{class=\"rt\",le=\"+Inf\"} 3\n");
	HAS("csfcat_long_slice_duration_seconds_sum{class=\"rt\"} 0.250000000\n");
	HAS("csfcat_long_slice_duration_seconds_count{class=\"rt\"} 3\n");
	HAS("csfcat_long_slice_duration_seconds_bucket{class=\"fair\",le=\"0.002\"} 0\n");
	HAS("csfcat_long_slice_duration_seconds_bucket{class=\"fair\",le=\"0.005\"} 1\n");
	HAS("csfcat_slice_reports_lost_total 7\n");
	/* No module here: the threshold it cannot read is left out, not written as 0. */
	HASNT("csfcat_slice_threshold_seconds");
	CHECK_EQ(files_in_dir(), 1);
}

SCENARIO(fpu, "fpu: each row's statistics in seconds, by instruction, RFBM and state")
{
	fresh_dir();
	write_fpu();
	slurp(PROM_DIR "/fpu.prom");
	HAS("# TYPE csfcat_fpu_latency_seconds gauge\n");
	/* 100 cycles of a 1 GHz TSC. */
	HAS("csfcat_fpu_latency_seconds{instruction=\"XSAVES\",rfbm=\"0x3\",state=\"modified\","
	    "statistic=\"p50\"} 1.000e-07\n");
	HAS("csfcat_fpu_latency_seconds{instruction=\"XSAVES\",rfbm=\"0x3\",state=\"modified\","
	    "statistic=\"max\"} 9.000e-07\n");
	HAS("csfcat_fpu_latency_seconds{instruction=\"XRSTORS\",rfbm=\"0x207\",state=\"init\","
	    "statistic=\"mean\"} 6.100e-08\n");
	HAS("csfcat_fpu_tsc_hertz 1000000000\n");
	HAS("csfcat_fpu_samples 1000\n");
	/* A label value is escaped as the format wants. */
	HAS("cpu_model=\"Odd \\\"CPU\\\" \\\\ 9\"");
	CHECK_EQ(files_in_dir(), 1);
}

SCENARIO(cpu, "cpu: what node_exporter does not export, and nothing it does")
{
	fresh_dir();
	CHECK_EQ(cpu_prom_write(PROM_DIR "/cpu.prom", 10000), 0);
	slurp(PROM_DIR "/cpu.prom");
	HAS("csfcat_cpu_page_refresh_period_seconds 0.010000\n");
	HAS("csfcat_cpu_page_info{abi_version=\"1\"} 1\n");
	HASNT("user");
	HASNT("idle");
}

SCENARIO(atomic, "a file is replaced whole, mode 0644; a failed write leaves the old one")
{
	struct stat a, b;
	struct prom_file p;

	fresh_dir();
	CHECK_EQ(cpu_prom_write(PROM_DIR "/cpu.prom", 10000), 0);
	REQUIRE(!stat(PROM_DIR "/cpu.prom", &a), "no file");
	CHECK_EQ(a.st_mode & 07777, 0644);
	CHECK_EQ(cpu_prom_write(PROM_DIR "/cpu.prom", 20000), 0);
	REQUIRE(!stat(PROM_DIR "/cpu.prom", &b), "no file");
	/* rename() over it: a new inode, so that a reader holding the old one reads it whole. */
	CHECK(a.st_ino != b.st_ino, "written in place (inode %lu)", (unsigned long)a.st_ino);
	CHECK(strstr(slurp(PROM_DIR "/cpu.prom"), "seconds 0.020000\n"), "not the new file");
	/* Begun, then abandoned by a failed write: the old file stays, no hidden file is left. */
	REQUIRE(!prom_begin(&p, "cpu", PROM_DIR "/cpu.prom"), "prom_begin");
	fclose(p.f);
	p.f = fopen("/dev/full", "w");
	REQUIRE(p.f, "/dev/full");
	fputs("x\n", p.f);
	CHECK_EQ(prom_commit(&p), -1);
	CHECK(strstr(slurp(PROM_DIR "/cpu.prom"), "seconds 0.020000\n"), "the old file is gone");
	CHECK_EQ(files_in_dir(), 1);
	CHECK_EQ(prom_check_dir("cpu", "/nonexistent/cpu.prom"), EXIT_FAILURE);
	CHECK_EQ(cpu_prom_write("/nonexistent/cpu.prom", 1), -1);
}

SCENARIO(promtool, "promtool check metrics passes on every file, csfcat mem's too")
{
	char out[8192], cmd[512];
	const char *files[] = { "slices", "fpu", "cpu", "mem" };

	if (t_run("command -v promtool", out, sizeof(out))) {
		REQUIRE(!getenv("CSF_PROMTOOL"), "no promtool: apt-get install prometheus");
		SKIP("no promtool (Debian's package prometheus)");
	}
	fresh_dir();
	write_slices();
	write_fpu();
	CHECK_EQ(cpu_prom_write(PROM_DIR "/cpu.prom", 10000), 0);
	/* csfcat mem itself, on a DAMON_STAT fixture (see t_mem_stat). */
	snprintf(cmd, sizeof(cmd),
		 "CSFCAT_MEM_ROOT=%s/damon-stat/v7.3 csfcat mem --prometheus " PROM_DIR
		 "/mem.prom >/dev/null",
		 getenv("CSF_FIXTURES") ?: "tests/fixtures");
	CHECK_EQ(t_run(cmd, out, sizeof(out)), 0);
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		/* promtool prints its findings and exits 0 only with none (as of 2.42). */
		snprintf(cmd, sizeof(cmd), "promtool check metrics <" PROM_DIR "/%s.prom 2>&1",
			 files[i]);
		CHECK_EQ(t_run(cmd, out, sizeof(out)), 0);
		CHECK(!out[0], "%s.prom: %s", files[i], out);
	}
}

int main(void)
{
	int rc = t_main("t_prom");

	if (system("rm -rf " PROM_DIR))
		rc = 1;
	return rc;
}
