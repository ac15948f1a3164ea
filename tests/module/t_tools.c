// SPDX-License-Identifier: GPL-2.0
/*
 * t_tools: csfcat as a user runs it: its output, and its exit status when the module is not
 * there. Runs csfcat from PATH.
 */
#include "../t.h"
#include "../../tools/json.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run csfcat ARGS in a mount namespace where setup() has hidden the module; return status. */
static int run_hidden(int (*setup)(void), const char *args)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		char cmd[128], out[1024];

		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    setup())
			_exit(100);
		snprintf(cmd, sizeof(cmd), "csfcat %s 2>&1", args);
		status = t_run(cmd, out, sizeof(out));
		printf("%s", out);
		_exit(status);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int unmount_csf(void)
{
	return umount2(CSF_MOUNT_POINT, MNT_DETACH);
}

static int hide_sys_kernel(void)
{
	return mount("none", "/sys/kernel", "tmpfs", 0, NULL);
}

SCENARIO(self_line,
	 "csfcat self 100 prints the spec's line, and the buckets add up to the wall time")
{
	char out[8192];
	double sleep_ms, spin_ms, wall, b[5];
	unsigned long long pre, blk, mig, mn, mj, sr, sw, ir, iw;
	int n;

	REQUIRE(t_run("csfcat self 100", out, sizeof(out)) == 0, "exit status");
	printf("#   %s", out);
	n = sscanf(out,
		   "sleep %lf ms + spin %lf ms: wall %lfms = cpu %lf + runq %lf + sleep %lf"
		   " + dsleep %lf + iowait %lf | preempt %llu block %llu migrate %llu"
		   " | flt %llu/%llu | sysc r%llu w%llu | io r%lluB w%lluB",
		   &sleep_ms, &spin_ms, &wall, &b[0], &b[1], &b[2], &b[3], &b[4], &pre, &blk, &mig,
		   &mn, &mj, &sr, &sw, &ir, &iw);
	REQUIRE(n == 17, "parsed %d of 17 fields", n);
	CHECK(sleep_ms == 50 && spin_ms == 50, "sleep %g spin %g", sleep_ms, spin_ms);
	CHECK(wall >= 99, "wall %.3f ms", wall);
	CHECK(b[2] >= 45 && b[0] >= 45, "sleep %.3f cpu %.3f", b[2], b[0]);
	/* Each bucket is rounded to the microsecond on its own. */
	CHECK(b[0] + b[1] + b[2] + b[3] + b[4] > wall - 0.004 &&
		      b[0] + b[1] + b[2] + b[3] + b[4] < wall + 0.004,
	      "buckets %.3f, wall %.3f", b[0] + b[1] + b[2] + b[3] + b[4], wall);
	CHECK(blk >= 1, "block %llu", blk);
}

SCENARIO(thread_fields, "csfcat thread prints every field with its unit")
{
	static const char *const want[] = {
		"oncpu_cyc",   "runq_cyc",    "sleep_cyc",    "dsleep_cyc", "iowait_cyc",
		"nr_preempt",  "nr_block",    "nr_migrate",   "min_flt",    "maj_flt",
		"syscr",       "syscw",	      "rchar",	      "wchar",	    "read_bytes",
		"write_bytes", "sum_exec_ns", "run_delay_ns", "cpu",	    "start_tsc",
		"state",       "tsc",	      "tsc_resyncs",
	};
	char out[8192];

	REQUIRE(t_run("csfcat thread", out, sizeof(out)) == 0, "exit status");
	printf("%s", out);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		CHECK(strstr(out, want[i]), "no %s", want[i]);
	CHECK(strstr(out, " cycles (") && strstr(out, " ns "), "units missing");
}

SCENARIO(json, "--json: one valid JSON object per command, with the numbers of the text form")
{
	static const char *const buckets[] = { "oncpu_ns", "runq_ns", "sleep_ns", "dsleep_ns",
					       "iowait_ns" };
	char out[8192];
	bool found;
	double v, wall;

	REQUIRE(t_run("csfcat thread --json", out, sizeof(out)) == 0, "exit status");
	printf("#   %s", out);
	CHECK(json_valid_lines(out), "not JSON: %s", out);
	v = json_find_number(out, "tid", &found);
	CHECK(found && v > 0, "no tid");
	json_find_number(out, "oncpu", &found);
	CHECK(found, "no oncpu bucket");

	REQUIRE(t_run("csfcat cpu --json", out, sizeof(out)) == 0, "exit status");
	printf("#   %s", out);
	CHECK(json_valid_lines(out), "not JSON: %s", out);
	v = json_find_number(out, "idle", &found);
	CHECK(found && v > 0, "no idle time in the sum row");

	REQUIRE(t_run("csfcat self 20 --json", out, sizeof(out)) == 0, "exit status");
	printf("#   %s", out);
	CHECK(json_valid_lines(out), "not JSON: %s", out);
	/*
	 * What must hold whatever the host's load: the wall time covers the two requests, the
	 * sleep was a voluntary switch that left time in the sleep bucket, and the buckets add up
	 * to the wall time (to the rounding of five cycle-to-ns conversions). How much of the
	 * 10 ms lands in sleep rather than on a CPU depends on how long the guest takes to switch.
	 */
	wall = json_find_number(out, "wall_ns", &found);
	CHECK(found && wall >= 19e6, "wall_ns %g", wall);
	v = json_find_number(out, "sleep_ns", &found);
	CHECK(found && v > 0, "sleep_ns %g", v);
	v = json_find_number(out, "block", &found);
	CHECK(found && v >= 1, "block %g", v);
	v = 0;
	for (size_t i = 0; i < ARRAY_SIZE(buckets); i++) {
		v += json_find_number(out, buckets[i], &found);
		CHECK(found, "no %s", buckets[i]);
	}
	CHECK(v >= wall - 5 && v <= wall + 5, "the buckets add up to %.0f ns, wall_ns %.0f", v,
	      wall);
	CHECK(!json_valid_lines("{\"a\":1,}") && !json_valid_lines("{\"a\" 1}") &&
		      !json_valid_lines(""),
	      "the validator accepts broken JSON");
}

SCENARIO(exit_status, "csfcat exit status: 2 usage, 3 not loaded, 4 not mounted")
{
	char out[8192];

	CHECK_EQ(t_run("csfcat bogus 2>/dev/null", out, sizeof(out)), 2);
	CHECK_EQ(t_run("csfcat self 0 2>/dev/null", out, sizeof(out)), 2);
	CHECK_EQ(t_run("csfcat cpu --bogus 2>/dev/null", out, sizeof(out)), 2);
	CHECK_EQ(t_run("csfcat thread extra 2>/dev/null", out, sizeof(out)), 2);
	CHECK_EQ(t_run("csfcat --help", out, sizeof(out)), 0);
	CHECK(strstr(out, "Usage"), "no usage text");
	CHECK_EQ(run_hidden(unmount_csf, "thread"), 4);
	CHECK_EQ(run_hidden(hide_sys_kernel, "self 10"), 3);
}

int main(void)
{
	return t_main("t_tools");
}
