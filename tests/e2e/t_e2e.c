// SPDX-License-Identifier: GPL-2.0
/*
 * t_e2e: csfcat's numbers through the programs a fleet runs: Debian's prometheus-node-exporter
 * with its textfile collector, scraped by Debian's prometheus, which evaluates
 * packaging/csfcat-rules.yml. csfcat slices and csfcat mem run as their services run them
 * (packaging/csfcat-slices.service and csfcat-mem.service); the test asks Prometheus's HTTP API
 * what it holds and checks it against what the guest did: a 100 ms SCHED_FIFO spin counted
 * once, class rt, and the alert it should fire firing; the memory percentiles of a known
 * workload (tests/tmem.h), as csfcat wrote them.
 *
 * tests/debian/e2e-stage.sh puts the two programs (from the suite's own packages) and the rules
 * in /csf/e2e; where they are not staged, the scenarios skip. Needs root and two CPUs.
 */
/* A smaller cold set than t_mem's: this guest also holds Prometheus. */
#define COLD_MIB 256
#include "../t.h"
#include "../tslice.h"
#include "../tmem.h"
#include "../../tools/json.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MS 1000000ull
#define STAGED "/csf/e2e"
#define WORK "/tmp/e2e"
#define TEXTFILE WORK "/textfile"
#define EXPORTER_PORT 9100
#define PROMETHEUS_PORT 9090
/* Under emulation Prometheus takes tens of seconds to start; everything else waits on scrapes. */
#define START_S 240
#define SCRAPE_S 60
/*
 * A series' last sample over the last minute: a scrape that times out under emulation (the
 * guest is busy with the workload and DAMON) marks the series stale until the next one, which
 * an instant query would show as no series at all.
 */
#define LAST(series) "last_over_time(" series "[1m])"

enum { EXPORTER, PROMETHEUS, SLICES, MEM, NR_PROCS };
static const char *const proc_names[NR_PROCS] = { "node_exporter", "prometheus", "csfcat slices",
						  "csfcat mem" };
static pid_t procs[NR_PROCS];
static bool stack_up, stack_failed, has_damon;

/* A GET of path from 127.0.0.1:port, HTTP/1.0 (no chunks): the body in body, or -1. */
static int http_get(int port, const char *path, char *body, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	static char resp[1 << 20];
	char req[2048];
	size_t got = 0;
	const char *start;
	ssize_t n;
	int fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n", path, port);
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	while (got < sizeof(resp) - 1 && (n = read(fd, resp + got, sizeof(resp) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	resp[got] = 0;
	start = strstr(resp, "\r\n\r\n");
	if (strncmp(resp, "HTTP/1.", 7) != 0 || strncmp(resp + 8, " 200", 4) != 0 || !start)
		return -1;
	snprintf(body, len, "%s", start + 4);
	return 0;
}

/* q with what a URL's query may not hold escaped. */
static void url_escape(const char *q, char *out, size_t len)
{
	size_t w = 0;

	for (; *q && w + 4 < len; q++) {
		if ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		    (*q >= '0' && *q <= '9') || *q == '_' || *q == '.' || *q == '-')
			out[w++] = *q;
		else
			w += (size_t)snprintf(out + w, len - w, "%%%02X", (unsigned char)*q);
	}
	out[w] = 0;
}

/*
 * An instant query, its answer parsed into root (free it with json_value_free()): the array of
 * series it returned, or NULL when Prometheus did not answer or said no.
 */
static const struct json_value *query_result(const char *q, struct json_value *root)
{
	static char body[1 << 20];
	char path[2048], esc[1536];
	const struct json_value *data, *result;

	url_escape(q, esc, sizeof(esc));
	snprintf(path, sizeof(path), "/api/v1/query?query=%s", esc);
	if (http_get(PROMETHEUS_PORT, path, body, sizeof(body)) || !json_parse(body, root) ||
	    !(data = json_get(root, "data")) || !(result = json_get(data, "result")) ||
	    result->type != JSON_ARR)
		return NULL;
	return result;
}

/* A series' value (its "value": [time, "text"]), or NAN. */
static double series_value(const struct json_value *series)
{
	const struct json_value *v = json_get(series, "value");

	return v && v->n == 2 && v->kids[1].type == JSON_STR ? strtod(v->kids[1].str, NULL) : NAN;
}

/*
 * An instant query: how many series it returned, the value of the first in *v and its labels
 * (name=value, blank-separated) in labels; -1 when Prometheus did not answer or said no.
 */
static int query(const char *q, double *v, char *labels, size_t len)
{
	struct json_value root = { 0 };
	const struct json_value *result = query_result(q, &root), *m;
	int n = result ? (int)result->n : -1;

	if (v)
		*v = n > 0 ? series_value(&result->kids[0]) : NAN;
	if (labels && len)
		labels[0] = 0;
	if (n > 0 && labels && (m = json_get(&result->kids[0], "metric"))) {
		for (size_t i = 0; i < m->n; i++)
			snprintf(labels + strlen(labels), len - strlen(labels), "%s=%s ",
				 m->keys[i], m->kids[i].str ? m->kids[i].str : "");
	}
	json_value_free(&root);
	return n;
}

/*
 * An instant query's series by the integer value of their label (percentile): vals[label] for
 * each, 0 <= label < max; how many series it returned, or -1.
 */
static int query_by(const char *q, const char *label, double *vals, int max)
{
	struct json_value root = { 0 };
	const struct json_value *result = query_result(q, &root);
	int n = result ? (int)result->n : -1;
	char l[16];

	for (int i = 0; i < n; i++) {
		const struct json_value *m = json_get(&result->kids[i], "metric");
		int at;

		l[0] = 0;
		if (m)
			json_get_str(m, label, l, sizeof(l));
		at = l[0] ? atoi(l) : -1;
		if (at >= 0 && at < max)
			vals[at] = series_value(&result->kids[i]);
	}
	json_value_free(&root);
	return n;
}

/* Query until it returns a series whose value differs from old (NAN: any), or time runs out. */
static bool wait_value(const char *q, double old, int seconds, double *v)
{
	for (int i = 0; i < seconds * 10; i++) {
		if (query(q, v, NULL, 0) > 0 && !isnan(*v) && (isnan(old) || *v != old))
			return true;
		t_sleep_ns(100 * MS);
	}
	return false;
}

static pid_t spawn(const char *log, char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(98);
		execv(argv[0], argv);
		_exit(99);
	}
	return pid;
}

static void print_logs(void)
{
	char cmd[256], buf[16384];

	for (int i = 0; i < NR_PROCS; i++) {
		snprintf(cmd, sizeof(cmd), "tail -n 15 " WORK "/%d.log 2>/dev/null", i);
		t_run(cmd, buf, sizeof(buf));
		printf("# --- %s:\n%s", proc_names[i], buf);
	}
}

/* The guest's init leaves the loopback interface down; its address is the kernel's own. */
static int lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;

	if (fd >= 0 && !ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static const char prometheus_yml[] = "global:\n"
				     "  scrape_interval: 1s\n"
				     "  evaluation_interval: 1s\n"
				     "rule_files:\n"
				     "  - " STAGED "/csfcat-rules.yml\n"
				     "scrape_configs:\n"
				     "  - job_name: node\n"
				     "    static_configs:\n"
				     "      - targets: ['127.0.0.1:9100']\n";

static char slices_prom[] = TEXTFILE "/csfcat_slices.prom",
	    mem_prom[] = TEXTFILE "/csfcat_mem.prom";

/*
 * The stack, once: the exporter, the two csfcat services' commands, Prometheus; up when
 * Prometheus holds a scrape of csfcat's slice counters.
 */
static bool need_stack(void)
{
	/* Its textfile collector alone: the others cost scrape time and are not ours to test. */
	char *exporter[] = { STAGED "/prometheus-node-exporter",
			     "--collector.disable-defaults",
			     "--collector.textfile",
			     "--collector.textfile.directory=" TEXTFILE,
			     "--web.listen-address=127.0.0.1:9100",
			     NULL };
	char *prometheus[] = { STAGED "/prometheus", "--config.file=" WORK "/prometheus.yml",
			       "--storage.tsdb.path=" WORK "/data",
			       "--web.listen-address=127.0.0.1:9090", NULL };
	/* What csfcat-slices.service and csfcat-mem.service run, with the default settings. */
	char *slices[] = { "/csf/bin/csfcat", "slices",	   "--threshold", "50",
			   "--prometheus",    slices_prom, NULL };
	char *mem[] = { "/csf/bin/csfcat", "mem", "--watch", "5", "--prometheus", mem_prom, NULL };
	char *const *argvs[NR_PROCS] = { exporter, prometheus, slices, mem };
	char text[4096];
	double v;
	FILE *f;

	if (stack_up || stack_failed)
		return stack_up;
	stack_failed = true;
	if (lo_up())
		t_die("bringing the loopback interface up");
	if (system("rm -rf " WORK " && mkdir -p " TEXTFILE))
		t_die("making " TEXTFILE);
	f = fopen(WORK "/prometheus.yml", "w");
	if (!f || fputs(prometheus_yml, f) < 0 || fclose(f))
		t_die("writing " WORK "/prometheus.yml");
	/* The memory numbers are of a workload whose shape is known. */
	if (has_damon)
		need_workload();
	for (int i = 0; i < NR_PROCS; i++) {
		snprintf(text, sizeof(text), WORK "/%d.log", i);
		if (i != MEM || has_damon)
			procs[i] = spawn(text, (char *const *)argvs[i]);
	}
	for (int i = 0;
	     i < START_S * 10 && http_get(PROMETHEUS_PORT, "/-/ready", text, sizeof(text)); i++)
		t_sleep_ns(100 * MS);
	if (http_get(PROMETHEUS_PORT, "/-/ready", text, sizeof(text))) {
		printf("# Prometheus not ready after %d s\n", START_S);
		print_logs();
		return false;
	}
	if (!wait_value(LAST("csfcat_long_slices_total{class=\"rt\"}"), NAN, SCRAPE_S, &v)) {
		printf("# no csfcat_long_slices_total in Prometheus after %d s\n", SCRAPE_S);
		print_logs();
		return false;
	}
	stack_up = true;
	stack_failed = false;
	return true;
}

#define NEED_STACK()                                                                          \
	do {                                                                                  \
		if (access(STAGED "/prometheus", X_OK))                                       \
			SKIP("Prometheus is not staged for this suite (e2e-stage.sh)");       \
		REQUIRE(need_stack(), "the exporter, csfcat and Prometheus did not come up"); \
	} while (0)

SCENARIO(slice_counted, "a 100 ms SCHED_FIFO spin reaches Prometheus once, class rt, over 50 ms")
{
	const char *rt = LAST("csfcat_long_slices_total{class=\"rt\"}");
	const char *rt_over = "sum(" LAST(
		"csfcat_long_slice_duration_seconds_count{class=\"rt\"}") ")"
									  " - sum(" LAST(
										  "csfcat_long_slice_duration_seconds_bucket{class=\"rt\",le=\"0.05\"}") ")";
	double before, after, over0, over1;
	char labels[1024];
	void *err;
	pthread_t th;

	NEED_STACK();
	/* What csfcat counted from the ring's history, as Prometheus has it now. */
	REQUIRE(wait_value(rt, NAN, SCRAPE_S, &before), "no %s", rt);
	REQUIRE(wait_value(rt_over, NAN, SCRAPE_S, &over0), "no %s", rt_over);
	REQUIRE(query(rt, &before, labels, sizeof(labels)) == 1, "series of %s", rt);
	printf("#   before: %s= %.0f (%s)\n", rt, before, labels);
	pthread_create(&th, NULL, t_fifo_spin_100ms, NULL);
	pthread_join(th, &err);
	REQUIRE(!err, "SCHED_FIFO refused");
	REQUIRE(wait_value(rt, before, SCRAPE_S, &after), "%s stayed %.0f", rt, before);
	/* A second scrape, so that nothing else arrives in between unseen. */
	t_sleep_ns(3000 * MS);
	query(rt, &after, labels, sizeof(labels));
	query(rt_over, &over1, NULL, 0);
	printf("#   after: %.0f (%s)\n", after, labels);
	CHECK_EQ(after - before, 1);
	CHECK_EQ(over1 - over0, 1);
	CHECK(strstr(labels, "job=node ") && strstr(labels, "instance=127.0.0.1:9100 "),
	      "labels %s", labels);
}

SCENARIO(alert_fires, "the rule for a CPU held over 50 ms fires, for class rt")
{
	static char body[1 << 20];
	bool firing = false;

	NEED_STACK();
	/* The spin of the scenario before, or one of its own when it runs alone. */
	if (query(LAST("csfcat_long_slices_total{class=\"rt\"}") " > 0", NULL, NULL, 0) < 1) {
		pthread_t th;

		pthread_create(&th, NULL, t_fifo_spin_100ms, NULL);
		pthread_join(th, NULL);
	}
	for (int i = 0; i < SCRAPE_S * 10 && !firing; i++) {
		struct json_value root = { 0 };
		const struct json_value *data, *alerts;

		if (!http_get(PROMETHEUS_PORT, "/api/v1/alerts", body, sizeof(body)) &&
		    json_parse(body, &root) && (data = json_get(&root, "data")) &&
		    (alerts = json_get(data, "alerts")) && alerts->type == JSON_ARR) {
			for (size_t a = 0; a < alerts->n; a++) {
				const struct json_value *l = json_get(&alerts->kids[a], "labels");
				char name[64] = "", class[16] = "", state[16] = "";

				if (!l)
					continue;
				json_get_str(l, "alertname", name, sizeof(name));
				json_get_str(l, "class", class, sizeof(class));
				json_get_str(&alerts->kids[a], "state", state, sizeof(state));
				firing |= !strcmp(name, "CsfcatCpuHeldOver50ms") &&
					  !strcmp(class, "rt") && !strcmp(state, "firing");
			}
		}
		json_value_free(&root);
		if (!firing)
			t_sleep_ns(100 * MS);
	}
	if (!firing)
		printf("#   alerts: %.2000s\n", body);
	CHECK(firing, "CsfcatCpuHeldOver50ms{class=\"rt\"} is not firing");
}

/*
 * One report of csfcat_memory_idle_seconds, as Prometheus and the file both hold it: one query for
 * all 101, compared with the file read just after, until both hold the same report (csfcat
 * rewrites the file every 5 s and Prometheus reads it every second). Returns how many of the 101
 * agree; the aggregation interval of that report in *aggr_s.
 */
static int memory_report(double *vals, double *aggr_s)
{
	static char file[64 * 1024];
	char line[160];
	const char *aggr;
	int n = 0, same = 0;

	for (int tries = 0; tries < 20 && same < 101; tries++) {
		for (int p = 0; p <= 100; p++)
			vals[p] = NAN;
		n = query_by(LAST("csfcat_memory_idle_seconds"), "percentile", vals, 101);
		file[0] = 0;
		file_read(mem_prom, file, sizeof(file));
		same = 0;
		for (int p = 0; p <= 100 && n == 101; p++) {
			snprintf(line, sizeof(line), ",percentile=\"%d\"} %.3f\n", p, vals[p]);
			same += strstr(file, line) != NULL;
		}
		if (same < 101)
			t_sleep_ns(700 * MS);
	}
	CHECK_EQ(n, 101);
	aggr = strstr(file, "csfcat_memory_aggregation_interval_seconds{");
	*aggr_s = aggr && strstr(aggr, "} ") ? strtod(strstr(aggr, "} ") + 2, NULL) : 0;
	return same;
}

SCENARIO(memory_percentiles,
	 "memory idle percentiles in Prometheus as csfcat wrote them: 101, ordered, the hot set")
{
	char labels[1024], state;
	double v, t, vals[101], aggr_s = 0, cpu0 = workload_cpu_s(&state);
	uint64_t b0 = loop_now(), t0 = mono_ns(), el;
	bool hot = false;
	int same = 0;

	if (!has_damon)
		SKIP("this kernel has no DAMON");
	NEED_STACK();
	REQUIRE(wait_value(LAST("csfcat_memory_idle_seconds{percentile=\"100\"}"), NAN, SCRAPE_S,
			   &v),
		"no memory percentiles in Prometheus");
	query(LAST("csfcat_memory_idle_seconds{percentile=\"50\"}"), &v, labels, sizeof(labels));
	CHECK(strstr(labels, "source=damon_stat ") || strstr(labels, "source=sysfs "), "labels %s",
	      labels);
	/*
	 * The hot 64 MiB is written all the time: the lowest percentile is memory accessed in the
	 * last aggregation interval (negative), as csfcat mem writes it, or, from DAMON_STAT, idle
	 * for one interval at most: it snapshots at any sample, and early in an interval the hot
	 * regions can have no access counted yet (age 0: one interval). One report of our kdamond
	 * can miss it too (seen once in CI on 6.12: p0 one interval, no region accessed): csfcat's
	 * tuning can move the point where our scheme is applied off the end of an interval, and this
	 * guest's kdamond shares two TCG vCPUs with Prometheus. So the hot set must look accessed
	 * in one of three reports. How idle the cold set looks is t_mem's to judge.
	 */
	for (int report = 1; report <= 3 && !hot; report++) {
		same = memory_report(vals, &aggr_s);
		if (same < 101)
			break;
		printf("#   report %d: p0 %.3f s, p50 %.3f s, p100 %.3f s; aggregation interval "
		       "%.3f s\n",
		       report, vals[0], vals[50], vals[100], aggr_s);
		/* A pass of the loop takes tens of ms: a rate needs a second at least. */
		el = mono_ns() - t0;
		if (el < 1000 * MS)
			t_sleep_ns(1000 * MS - el);
		v = workload_cpu_s(&state) - cpu0;
		t = (double)(mono_ns() - t0) / 1e9;
		printf("#   the workload (%c) wrote %.1f MiB/s on %.0f%% of a CPU in %.1f s\n",
		       state, (double)(loop_now() - b0) / (1 << 20) / t, 100 * v / t, t);
		hot = vals[0] <= 0 ||
		      (strstr(labels, "source=damon_stat ") && vals[0] <= aggr_s + 0.0005);
		if (!hot)
			t_sleep_ns(5500 * MS);
	}
	CHECK_EQ(same, 101);
	for (int p = 1; p <= 100 && same == 101; p++)
		CHECK(vals[p] >= vals[p - 1], "p%d %.3f below p%d %.3f", p, vals[p], p - 1,
		      vals[p - 1]);
	CHECK(hot,
	      "p0 %.3f s: the hot set does not look accessed in 3 reports "
	      "(aggregation interval %.3f s)",
	      vals[0], aggr_s);
	CHECK(vals[100] > vals[0], "p100 %.3f s, p0 %.3f s", vals[100], vals[0]);
}

int main(void)
{
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	has_damon = !access("/sys/module/damon_stat/parameters/enabled", F_OK) ||
		    !access("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", F_OK);
	rc = t_main("t_e2e");
	/* SIGTERM, as systemctl stop: csfcat puts slice_warn_us back and removes its kdamond. */
	for (int i = NR_PROCS - 1; i >= 0; i--) {
		if (procs[i] > 0) {
			kill(procs[i], SIGTERM);
			waitpid(procs[i], NULL, 0);
		}
	}
	if (wl_pid) {
		kill(wl_pid, SIGKILL);
		waitpid(wl_pid, NULL, 0);
	}
	return rc;
}
