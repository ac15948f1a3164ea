// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat thread and csfcat self: the calling thread's page, and where a sleep and a spin went.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/coarse_stat_fs.h"
#include "csfcat.h"
#include "util.h"

static const char *const state_names[CSF_NR_STATES] = { "oncpu", "runq", "sleep", "dsleep",
							"iowait" };

/* The counter the page's cycles are of (csf_hdr.counter), as --json names it. */
static const char *counter_name(const struct csf_hdr *h)
{
	switch (h->counter) {
	case CSF_COUNTER_TSC:
		return "tsc";
	case CSF_COUNTER_CNTVCT:
		return "cntvct";
	default:
		return "unknown";
	}
}

/* How csf_rdtsc() reads that counter. */
static const char *counter_read(const struct csf_hdr *h)
{
	if (h->counter == CSF_COUNTER_CNTVCT)
		return "isb; mrs cntvct_el0";
	if (h->counter != CSF_COUNTER_TSC)
		return "a read this csfcat does not know";
	return h->flags & CSF_HDR_RDTSCP ? "rdtscp" : "lfence; rdtsc";
}

static void print_tsc(const struct csf_hdr *h)
{
	printf("%-14s %.3f MHz, %s, read with %s\n", counter_name(h), h->tsc_hz / 1e6,
	       h->flags & CSF_HDR_TSC_INVARIANT ? "invariant" :
						  "NOT invariant (cycles may not be constant time)",
	       counter_read(h));
}

/* The page's counters, in the order of the ABI: name, value, unit. */
struct counter {
	const char *name;
	uint64_t v;
	const char *unit;
};

#define NR_COUNTERS 13

static void counters(const struct csf_thread_page *p, struct counter c[NR_COUNTERS])
{
	const struct counter all[NR_COUNTERS] = {
		{ "nr_preempt", p->nr_preempt, "involuntary switches" },
		{ "nr_block", p->nr_block, "voluntary switches" },
		{ "nr_migrate", p->nr_migrate, "returns on another CPU" },
		{ "min_flt", p->min_flt, "minor faults" },
		{ "maj_flt", p->maj_flt, "major faults" },
		{ "syscr", p->syscr, "read syscalls" },
		{ "syscw", p->syscw, "write syscalls" },
		{ "rchar", p->rchar, "bytes read by syscalls" },
		{ "wchar", p->wchar, "bytes written by syscalls" },
		{ "read_bytes", p->read_bytes, "bytes read from storage" },
		{ "write_bytes", p->write_bytes, "bytes written to storage" },
		{ "sum_exec_ns", p->sum_exec_ns, "ns on a CPU (scheduler's count)" },
		{ "run_delay_ns", p->run_delay_ns, "ns waiting in a runqueue (scheduler's count)" },
	};

	memcpy(c, all, sizeof(all));
}

/* A log2 histogram in us, as bcc's cpudist and runqlat draw them; empty rows at the ends cut. */
static void print_hist(const char *title, const __u64 *b)
{
	int first = -1, last = -1;
	uint64_t max = 0;

	for (int i = 0; i < CSF_HIST_BUCKETS; i++) {
		if (b[i] && first < 0)
			first = i;
		if (b[i])
			last = i;
		if (b[i] > max)
			max = b[i];
	}
	printf("%s\n", title);
	if (first < 0) {
		printf("    (none yet)\n");
		return;
	}
	printf("%24s : %-8s %s\n", "us", "count", "distribution");
	for (int i = first; i <= last; i++) {
		unsigned long long lo = i ? 1ull << i : 0, hi = (1ull << (i + 1)) - 1;
		char range[48], bar[41];
		int n = (int)(b[i] * 40 / max);

		if (i == CSF_HIST_BUCKETS - 1)
			snprintf(range, sizeof(range), "%llu -> ...", lo);
		else
			snprintf(range, sizeof(range), "%llu -> %llu", lo, hi);
		memset(bar, '*', (size_t)n);
		bar[n] = 0;
		printf("%24s : %-8" PRIu64 " |%-40s|\n", range, (uint64_t)b[i], bar);
	}
}

static void hist_json(const struct csf_thread_hist *h)
{
	json_begin("hist");
	json_u64("nr_long_oncpu", h->nr_long_oncpu);
	json_u64("long_threshold_us", h->long_threshold_us);
	json_begin_array("oncpu_us");
	for (int i = 0; i < CSF_HIST_BUCKETS; i++)
		json_u64(NULL, h->oncpu_us[i]);
	json_end_array();
	json_begin_array("runq_us");
	for (int i = 0; i < CSF_HIST_BUCKETS; i++)
		json_u64(NULL, h->runq_us[i]);
	json_end_array();
	json_end();
}

static void thread_json(const struct csf_snap *s, const struct csf_thread_hist *hist)
{
	const struct csf_thread_page *p = &s->p;
	const struct csf_hdr *h = &p->hdr;
	struct counter c[NR_COUNTERS];

	json_begin(NULL);
	json_u64("tid", p->tid);
	json_u64("abi_version", h->abi_version);
	json_u64("tsc_hz", h->tsc_hz);
	json_bool("tsc_invariant", h->flags & CSF_HDR_TSC_INVARIANT);
	json_bool("rdtscp", h->flags & CSF_HDR_RDTSCP);
	json_str("state", p->state < CSF_NR_STATES ? state_names[p->state] : "ended");
	json_bool("parked", p->flags & CSF_THREAD_PARKED);
	json_bool("ended", p->flags & CSF_THREAD_ENDED);
	json_u64("tsc_resyncs", p->tsc_resyncs);
	json_bool("extrapolated", s->extrapolated);
	json_u64("start_tsc", p->start_tsc);
	json_u64("last_switch_tsc", p->last_switch_tsc);
	json_u64("snapshot_tsc", s->tsc);
	json_begin("cyc");
	for (int i = 0; i < CSF_NR_STATES; i++)
		json_u64(state_names[i], p->cyc[i]);
	json_end();
	json_begin("ns");
	for (int i = 0; i < CSF_NR_STATES; i++)
		json_u64(state_names[i], csf_cyc_to_ns(h, p->cyc[i]));
	json_end();
	counters(p, c);
	for (int i = 0; i < NR_COUNTERS; i++)
		json_u64(c[i].name, c[i].v);
	json_u64("cpu", p->cpu);
	json_u64("max_oncpu_cyc", p->max_oncpu_cyc);
	if (hist)
		hist_json(hist);
	json_str("counter", counter_name(h));
	json_end();
	json_flush();
}

static int cmd_thread(int argc, char **argv)
{
	struct csf_snap s;
	const struct csf_thread_page *p = &s.p;
	const struct csf_hdr *h = &p->hdr;
	struct counter c[NR_COUNTERS];
	struct csf_thread_hist hist, *hp = &hist;
	bool json;
	int err;

	err = csfcat_parse_json_only(argc, argv, &json);
	if (err)
		return err;
	if (optind != argc)
		return csfcat_usage_error("thread", "takes no arguments", NULL);
	if (csf_thread_snap(&s))
		return csfcat_map_error(CSF_THREAD_FILE);
	if (csf_thread_hist(hp))
		hp = NULL; /* a module older than the histograms */
	if (json) {
		thread_json(&s, hp);
		return 0;
	}

	printf("thread-self of tid %u (ABI %u)\n", p->tid, h->abi_version);
	print_tsc(h);
	printf("state          %s%s\n", p->state < CSF_NR_STATES ? state_names[p->state] : "ended",
	       p->flags & CSF_THREAD_PARKED ? " (parked)" : "");
	printf("start_tsc      %" PRIu64 " cycles\n", (uint64_t)p->start_tsc);
	printf("last_switch    %" PRIu64 " cycles (%.3f ms before this snapshot)\n",
	       (uint64_t)p->last_switch_tsc, csfcat_ms(h, s.tsc - p->last_switch_tsc));
	printf("snapshot tsc   %" PRIu64 " cycles (%.3f ms since start)%s\n", s.tsc,
	       csfcat_ms(h, s.tsc - p->start_tsc), s.extrapolated ? "" : ", not extrapolated");
	for (int i = 0; i < CSF_NR_STATES; i++) {
		char name[16];

		snprintf(name, sizeof(name), "%s_cyc", state_names[i]);
		printf("%-14s %" PRIu64 " cycles (%.3f ms)\n", name, (uint64_t)p->cyc[i],
		       csfcat_ms(h, p->cyc[i]));
	}
	counters(p, c);
	for (int i = 0; i < NR_COUNTERS; i++)
		printf("%-14s %" PRIu64 " %s\n", c[i].name, c[i].v, c[i].unit);
	printf("cpu            %u\n", p->cpu);
	printf("tsc_resyncs    %u times the TSC stepped back and the page followed\n",
	       p->tsc_resyncs);
	printf("max_oncpu_cyc  %" PRIu64 " cycles (%.3f ms), the longest stretch on a CPU\n",
	       (uint64_t)p->max_oncpu_cyc, csfcat_ms(h, p->max_oncpu_cyc));
	if (!hp)
		return 0;
	printf("nr_long_oncpu  %" PRIu64 " stretches on a CPU longer than slice_warn_us",
	       (uint64_t)hp->nr_long_oncpu);
	if (hp->long_threshold_us)
		printf(" (%u us)", hp->long_threshold_us);
	putchar('\n');
	print_hist("on-CPU stretches (cpudist):", hp->oncpu_us);
	print_hist("runqueue waits (runqlat):", hp->runq_us);
	return 0;
}

const struct csfcat_cmd csfcat_cmd_thread = {
	.name = "thread",
	.args = "[--json]",
	.help = "the calling thread's page, every field with its unit",
	.run = cmd_thread,
};

static void self_json(unsigned long n, const struct csf_snap *a, const struct csf_snap *b)
{
	const struct csf_hdr *h = &b->p.hdr;

	json_begin(NULL);
	json_double("sleep_ms", n / 2.0, 1);
	json_double("spin_ms", n / 2.0, 1);
	json_u64("wall_ns", csf_cyc_to_ns(h, b->tsc - a->tsc));
	for (int i = 0; i < CSF_NR_STATES; i++) {
		char key[16];

		snprintf(key, sizeof(key), "%s_ns", state_names[i]);
		json_u64(key, csf_cyc_to_ns(h, b->p.cyc[i] - a->p.cyc[i]));
	}
	json_u64("preempt", b->p.nr_preempt - a->p.nr_preempt);
	json_u64("block", b->p.nr_block - a->p.nr_block);
	json_u64("migrate", b->p.nr_migrate - a->p.nr_migrate);
	json_u64("min_flt", b->p.min_flt - a->p.min_flt);
	json_u64("maj_flt", b->p.maj_flt - a->p.maj_flt);
	json_u64("syscr", b->p.syscr - a->p.syscr);
	json_u64("syscw", b->p.syscw - a->p.syscw);
	json_u64("rchar", b->p.rchar - a->p.rchar);
	json_u64("wchar", b->p.wchar - a->p.wchar);
	json_end();
	json_flush();
}

static int cmd_self(int argc, char **argv)
{
	char *end, line[CSF_DIFF_BUFSZ];
	struct csf_snap a, b;
	unsigned long n;
	uint64_t half_ns, until;
	struct timespec ts;
	const char *arg;
	bool json;
	int err;

	err = csfcat_parse_json_only(argc, argv, &json);
	if (err)
		return err;
	if (optind + 1 != argc)
		return csfcat_usage_error("self", "needs one argument, N ms", NULL);
	arg = argv[optind];
	errno = 0;
	n = strtoul(arg, &end, 10);
	if (errno || *end || !*arg || n == 0 || n > 3600000) {
		fprintf(stderr, "%s: self: N must be a number of ms from 1 to 3600000, not '%s'\n",
			csfcat_prog, arg);
		return EXIT_USAGE;
	}
	half_ns = n * 500000ull;

	if (csf_thread_snap(&a))
		return csfcat_map_error(CSF_THREAD_FILE);
	ts.tv_sec = (time_t)(half_ns / 1000000000u);
	ts.tv_nsec = (long)(half_ns % 1000000000u);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	for (until = mono_ns() + half_ns; mono_ns() < until;)
		;
	if (csf_thread_snap(&b))
		return csfcat_map_error(CSF_THREAD_FILE);

	if (json) {
		self_json(n, &a, &b);
		return 0;
	}
	if (csf_format_diff(line, sizeof(line), &a, &b) < 0) {
		fprintf(stderr, "%s: self: %s\n", csfcat_prog, strerror(errno));
		return EXIT_FAILURE;
	}
	printf("sleep %g ms + spin %g ms: %s\n", n / 2.0, n / 2.0, line);
	return 0;
}

const struct csfcat_cmd csfcat_cmd_self = {
	.name = "self",
	.args = "N [--json]",
	.help = "sleep N/2 ms, spin N/2 ms, and print where the N ms went",
	.run = cmd_self,
};
