// SPDX-License-Identifier: GPL-2.0
/*
 * t_fpu_report: csfcat fpu-report on generated trace logs whose statistics are known by
 * construction, in both formats the series names (trace_pipe, trace-cmd report), with
 * malformed and truncated lines among them; --json; --compare. Needs no module: runs csfcat
 * from PATH, in the guest or on any machine.
 */
#include "../t.h"
#include "../../tools/json.h"

#include <sys/wait.h>
#include <unistd.h>

#define LOG_A "/tmp/t_fpu_report_a.log"
#define LOG_B "/tmp/t_fpu_report_b.log"
#define JSON_A "/tmp/t_fpu_report_a.json"
#define JSON_B "/tmp/t_fpu_report_b.json"

static void pipe_line(FILE *f, int i, const char *ev, unsigned long long lat, const char *rfbm,
		      const char *xinuse)
{
	fprintf(f,
		"            bash-%d    [%03d] d..1.  %d.%06d: %s: x86/fpu: latency:%llu RFBM:%s XINUSE:%s\n",
		1000 + i % 7, i % 4, 100 + i, i * 37 % 1000000, ev, lat, rfbm, xinuse);
}

static void cmd_line(FILE *f, int i, const char *ev, unsigned long long lat, const char *rfbm,
		     const char *xinuse)
{
	fprintf(f,
		"       trace-cmd-%d  [%03d]  %d.%06d: %s: x86/fpu: latency:%llu RFBM:%s XINUSE:%s\n",
		2000 + i, i % 2, 200 + i, i, ev, lat, rfbm, xinuse);
}

/*
 * The log, scale times every latency. Rows, in the script's order (event name, then RFBM and
 * XINUSE as signed numbers):
 *   xrstor 0x202e7 0x202: 10, 20, ... 330 (trace-cmd report lines): avg 5610 / 33 = 170;
 *      round(0.97 * 33) = 32 smallest: 5280 / 32 = 165; p50 = 17th = 170; p99 = 33rd = 330
 *   xrstor 0x206e7 0x0: 1, 2: avg 1.5 rounds up to 2; 2 kept: avg97 2; p50 1, p99 2
 *   xsave 0x8000000000000001 0x0: 70000 alone (beyond the dense counts); sorts first (< 0)
 *   xsave 0x21f 0x207: 100000, 200001: avg 150000.5 -> 150001 (0x21f < 0x202e7)
 *   xsave 0x202e7 0x202: 1..100, shuffled: avg 50.5 -> 51; 97 kept: 4753 / 97 = 49; p50 50
 * and 8 malformed lines, and 3 lines of other kinds.
 */
static void write_log(const char *path, unsigned int scale)
{
	FILE *f = fopen(path, "w");
	const char *xs = "x86_fpu_latency_xsave", *xr = "x86_fpu_latency_xrstor";
	int i;

	if (!f)
		t_die("fopen %s", path);
	fprintf(f, "# tracer: nop\n#\ncpus=2\n");
	for (i = 0; i < 100; i++)
		pipe_line(f, i, xs, (unsigned long long)(i * 37 % 100 + 1) * scale, "0x202e7",
			  "0x202");
	for (i = 1; i <= 33; i++)
		cmd_line(f, i, xr, (unsigned long long)i * 10 * scale, "0x202e7", "0x202");
	pipe_line(f, 1, xr, 2ull * scale, "0x206e7", "0x0");
	pipe_line(f, 2, xr, 1ull * scale, "0x206e7", "0x0");
	pipe_line(f, 3, xs, 70000ull * scale, "0x8000000000000001", "0x0");
	cmd_line(f, 4, xs, 100000ull * scale, "0x21f", "0x207");
	cmd_line(f, 5, xs, 200001ull * scale, "0x21f", "0x207");
	/* Malformed: truncated, no latency, no XINUSE, another name, CR LF, no timestamp, no task
	 * name, a latency past 64 bits. */
	fprintf(f,
		"            bash-1    [000] d..1.  1.000001: x86_fpu_latency_xsave: x86/fpu: latency:5 RFBM:0x202e7 XINUS\n");
	fprintf(f,
		"            bash-1    [000] d..1.  1.000002: x86_fpu_latency_xsave: x86/fpu: latency: RFBM:0x202e7 XINUSE:0x202\n");
	fprintf(f,
		"            bash-1    [000] d..1.  1.000003: x86_fpu_latency_xrstor: x86/fpu: latency:5 RFBM:0x202e7\n");
	fprintf(f,
		"            bash-1    [000] d..1.  1.000004: x86_fpu_latency_xsavez: x86/fpu: latency:5 RFBM:0x202e7 XINUSE:0x202\n");
	fprintf(f,
		"            bash-1    [000] d..1.  1.000005: x86_fpu_latency_xsave: x86/fpu: latency:5 RFBM:0x202e7 XINUSE:0x202\r\n");
	fprintf(f,
		"            bash-1    [000] d..1.  : x86_fpu_latency_xsave: x86/fpu: latency:5 RFBM:0x202e7 XINUSE:0x202\n");
	fprintf(f,
		"[000] d..1.  1.000007: x86_fpu_latency_xsave: x86/fpu: latency:5 RFBM:0x202e7 XINUSE:0x202\n");
	fprintf(f,
		"            bash-1    [000] d..1.  1.000008: x86_fpu_latency_xsave: x86/fpu: latency:99999999999999999999 RFBM:0x202e7 XINUSE:0x202\n");
	/* Other events and a truncated last line without its newline. */
	fprintf(f, "          <idle>-0     [001] d..2.  1.5: sched_switch: prev_comm=swapper/1\n");
	fprintf(f,
		"            bash-1    [000] d..1.  1.000009: x86_fpu_latency_xsave: x86/fpu: laten");
	fclose(f);
}

static const char expected_a[] =
	"# " LOG_A
	": 151 lines, 138 events in 5 rows, 9 malformed lines skipped; latency in ns, as the events give it\n"
	"EVENTs                  RFBM                XINUSE  CNT  lat_min  lat_max  lat_avg  lat_avg(97%)  p50     p99     unit\n"
	"----------------------  ------------------  ------  ---  -------  -------  -------  ------------  ------  ------  ----\n"
	"x86_fpu_latency_xrstor  0x202e7             0x202   33   10       330      170      165           170     330     ns\n"
	"x86_fpu_latency_xrstor  0x206e7             0x0     2    1        2        2        2             1       2       ns\n"
	"x86_fpu_latency_xsave   0x8000000000000001  0x0     1    70000    70000    70000    70000         70000   70000   ns\n"
	"x86_fpu_latency_xsave   0x21f               0x207   2    100000   200001   150001   150001        100000  200001  ns\n"
	"x86_fpu_latency_xsave   0x202e7             0x202   100  1        100      51       49            50      99      ns\n";

/* B doubles every latency: ratios 2.00, but for rounding (avg97 of 1, 2 is 2; of 2, 4 is 3). */
static const char expected_compare[] =
	"# A: " JSON_A ": csfcat fpu-report of " LOG_A "\n"
	"# B: " JSON_B ": csfcat fpu-report of " LOG_B "\n"
	"# unit: ns; B/A: B's value over A's\n"
	"EVENTs                  RFBM                XINUSE  CNT A  CNT B  avg97 A  avg97 B  B/A   p50 A   p50 B   B/A   p99 A   p99 B   B/A\n"
	"----------------------  ------------------  ------  -----  -----  -------  -------  ----  ------  ------  ----  ------  ------  ----\n"
	"x86_fpu_latency_xrstor  0x202e7             0x202   33     33     165      330      2.00  170     340     2.00  330     660     2.00\n"
	"x86_fpu_latency_xrstor  0x206e7             0x0     2      2      2        3        1.50  1       2       2.00  2       4       2.00\n"
	"x86_fpu_latency_xsave   0x8000000000000001  0x0     1      1      70000    140000   2.00  70000   140000  2.00  70000   140000  2.00\n"
	"x86_fpu_latency_xsave   0x21f               0x207   2      2      150001   300001   2.00  100000  200000  2.00  200001  400002  2.00\n"
	"x86_fpu_latency_xsave   0x202e7             0x202   100    100    49       98       2.00  50      100     2.00  99      198     2.00\n";

/* What csfcat printed: too large for the stack. */
static char out[65536];

/* csfcat fpu-report --json of log into json, what --compare reads. */
static void json_of(const char *log, const char *json)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "csfcat fpu-report --json %s > %s", log, json);
	CHECK_EQ(t_run(cmd, out, sizeof(out)), 0);
}

SCENARIO(table,
	 "the table of a generated log: the script's columns, rounding and 97% cut, p50, p99")
{
	CHECK_EQ(t_run("csfcat fpu-report " LOG_A, out, sizeof(out)), 0);
	CHECK(!strcmp(out, expected_a), "got:\n%s\nexpected:\n%s", out, expected_a);
}

SCENARIO(stdin_same, "standard input reads the same")
{
	char in[65536];

	CHECK_EQ(t_run("csfcat fpu-report < " LOG_A, in, sizeof(in)), 0);
	REQUIRE(strstr(in, "EVENTs"), "%s", in);
	CHECK(!strcmp(strstr(in, "EVENTs"), strstr(expected_a, "EVENTs")), "%s", in);
	CHECK(!strncmp(in, "# stdin: 151 lines", 18), "%s", in);
	CHECK_EQ(t_run("cat " LOG_A " | csfcat fpu-report -", in, sizeof(in)), 0);
	CHECK(strstr(in, "lat_avg(97%)") && strstr(in, "150001"), "%s", in);
}

SCENARIO(json, "--json: one valid object with the same numbers and the counts")
{
	bool found;

	CHECK_EQ(t_run("csfcat fpu-report --json " LOG_A, out, sizeof(out)), 0);
	CHECK(json_valid_lines(out), "not JSON: %s", out);
	CHECK(json_find_number(out, "lines", &found) == 151 && found, "%s", out);
	CHECK(json_find_number(out, "events", &found) == 138 && found, "%s", out);
	CHECK(json_find_number(out, "malformed", &found) == 9 && found, "%s", out);
	CHECK(strstr(out, "\"event\":\"x86_fpu_latency_xsave\",\"rfbm\":\"0x202e7\","
			  "\"xinuse\":\"0x202\",\"cnt\":100,\"min\":1,\"max\":100,\"avg\":51,"
			  "\"avg97\":49,\"p50\":50,\"p99\":99}"),
	      "%s", out);
}

SCENARIO(compare, "--compare: rows side by side, B over A (B has every latency doubled)")
{
	json_of(LOG_A, JSON_A);
	json_of(LOG_B, JSON_B);
	CHECK_EQ(t_run("csfcat fpu-report --compare " JSON_A " " JSON_B, out, sizeof(out)), 0);
	CHECK(!strcmp(out, expected_compare), "got:\n%s\nexpected:\n%s", out, expected_compare);
	CHECK_EQ(t_run("csfcat fpu-report --compare --json " JSON_A " " JSON_B, out, sizeof(out)),
		 0);
	CHECK(json_valid_lines(out), "not JSON: %s", out);
	CHECK(strstr(out, "\"avg97_ratio\":2.0000"), "%s", out);
}

SCENARIO(errors, "errors: a missing log (1), bad arguments (2), tables of two units (1)")
{
	FILE *f;

	CHECK_EQ(t_run("csfcat fpu-report /nonexistent 2>&1", out, sizeof(out)), 1);
	CHECK_EQ(t_run("csfcat fpu-report --bogus 2>&1", out, sizeof(out)), 2);
	CHECK_EQ(t_run("csfcat fpu-report a b 2>&1", out, sizeof(out)), 2);
	json_of(LOG_A, JSON_A); /* a table to set the broken ones beside */
	CHECK_EQ(t_run("csfcat fpu-report --compare " JSON_A " 2>&1", out, sizeof(out)), 2);
	f = fopen(JSON_B, "w");
	REQUIRE(f, "%s", strerror(errno));
	fprintf(f, "{\"kind\":\"fpu\",\"unit\":\"cycles\",\"rows\":[]}\n");
	fclose(f);
	CHECK_EQ(t_run("csfcat fpu-report --compare " JSON_A " " JSON_B " 2>&1", out, sizeof(out)),
		 1);
	CHECK(strstr(out, "not comparable"), "%s", out);
	f = fopen(JSON_B, "w");
	REQUIRE(f, "%s", strerror(errno));
	fprintf(f, "{\"rows\":[{\"event\":\"x\"}\n");
	fclose(f);
	CHECK_EQ(t_run("csfcat fpu-report --compare " JSON_A " " JSON_B " 2>&1", out, sizeof(out)),
		 1);
}

int main(void)
{
	int ret;

	/* The logs every scenario reads, made up here: fixed files, written once. */
	write_log(LOG_A, 1);
	write_log(LOG_B, 2);
	ret = t_main("t_fpu_report");
	unlink(LOG_A);
	unlink(LOG_B);
	unlink(JSON_A);
	unlink(JSON_B);
	return ret;
}
