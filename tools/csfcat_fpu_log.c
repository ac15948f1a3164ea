// SPDX-License-Identifier: GPL-2.0
/*
 * csfcat fpu-report's reading side: trace logs of the x86_fpu_latency_xsave and
 * x86_fpu_latency_xrstor events, as trace_pipe and "trace-cmd report" print them, grouped by
 * (event, RFBM, XINUSE) as the unmerged series' script (xsave-latency-trace.sh) groups them.
 *
 * The script keeps the lines grep -E finds an event name in, then those its bash regex
 *
 *   ([^\ ]*)[[:space:]]*\[([0-9]+)\][[:space:]]*(.....\ )?[[:space:]]*([0-9.]*):[[:space:]]*
 *   ([^\ :]*):.*latency:([0-9]*)[[:space:]]*RFBM:(0x[0-9a-f]*)[[:space:]]*XINUSE:(0x[0-9a-f]*)$
 *
 * matches and whose INSERT sqlite3 accepts (a task name and a timestamp it can quote and
 * parse). This file accepts the same lines, without a regex engine: the end of the line is
 * fixed, so it is read backwards; the start is matched at the first "[cpu]" that works. Lines
 * that name an event but do not parse are counted as malformed.
 *
 * Statistics are exact, from a count per latency value (dense below 64 Ki, a sorted list
 * above), so that a large log costs memory per distinct value, not per line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csfcat_fpu.h"

#define FPU_DENSE 65536 /* latencies below this are counted per value */
#define FPU_READ_SIZE (1 << 20)

static const char *const fpu_events[] = { "x86_fpu_latency_xrstor", "x86_fpu_latency_xsave" };

struct fpu_group {
	int ev; /* index in fpu_events */
	uint64_t rfbm, xinuse;
	uint64_t n, min, max;
	unsigned __int128 sum;
	uint64_t *dense; /* count per value below FPU_DENSE, allocated on first use */
	uint64_t *big; /* values from FPU_DENSE up, sorted at the end */
	size_t nbig, capbig;
	struct fpu_group *next; /* hash chain */
};

#define FPU_HASH 256

struct fpu_log {
	struct fpu_group *hash[FPU_HASH];
	struct fpu_group *last; /* consecutive lines often share a group */
	size_t ngroups;
	uint64_t lines, events, malformed;
	int oom;
};

struct fpu_log *fpu_log_new(void)
{
	return calloc(1, sizeof(struct fpu_log));
}

void fpu_log_free(struct fpu_log *log)
{
	if (!log)
		return;
	for (size_t i = 0; i < FPU_HASH; i++) {
		struct fpu_group *g = log->hash[i], *next;

		for (; g; g = next) {
			next = g->next;
			free(g->dense);
			free(g->big);
			free(g);
		}
	}
	free(log);
}

/* [[:space:]] in the C locale */
static inline bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline int hex_lower(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* bash's $((0x...)): 64 bits, wrapping */
static uint64_t parse_hex(const char *p, const char *end)
{
	uint64_t v = 0;

	for (; p < end; p++)
		v = v << 4 | (uint64_t)hex_lower(*p);
	return v;
}

/*
 * The fixed end of a line: "latency:D+ S* RFBM:0xH* S* XINUSE:0xH*". Returns where "latency:"
 * starts, or NULL. A bare 0x is 0, as bash's $((0x)) is; the script inserts nothing for an
 * empty latency.
 */
static const char *parse_tail(const char *l, const char *e, uint64_t *lat, uint64_t *rfbm,
			      uint64_t *xinuse)
{
	const char *q = e, *end;

	while (q > l && hex_lower(q[-1]) >= 0)
		q--;
	if (q - l < 9 || memcmp(q - 9, "XINUSE:0x", 9) != 0)
		return NULL;
	*xinuse = parse_hex(q, e);
	q -= 9;
	while (q > l && is_space(q[-1]))
		q--;
	end = q;
	while (q > l && hex_lower(q[-1]) >= 0)
		q--;
	if (q - l < 7 || memcmp(q - 7, "RFBM:0x", 7) != 0)
		return NULL;
	*rfbm = parse_hex(q, end);
	q -= 7;
	while (q > l && is_space(q[-1]))
		q--;
	end = q;
	while (q > l && is_digit(q[-1]))
		q--;
	if (q == end || q - l < 8 || memcmp(q - 8, "latency:", 8) != 0)
		return NULL;
	/* sqlite3 stores a column INT as a 64-bit integer; past that it would be a float */
	*lat = 0;
	for (const char *d = q; d < end; d++) {
		if (*lat > (INT64_MAX - (uint64_t)(*d - '0')) / 10)
			return NULL;
		*lat = *lat * 10 + (uint64_t)(*d - '0');
	}
	return q - 8;
}

/* A timestamp sqlite3 takes as a number: digits with at most one dot, not a dot alone. */
static bool valid_timestamp(const char *p, const char *end)
{
	int dots = 0, digits = 0;

	for (; p < end; p++) {
		if (*p == '.')
			dots++;
		else
			digits++;
	}
	return digits && dots <= 1;
}

/*
 * The script passes the task's name and the event's name to its insert function unquoted:
 * bash drops tabs at their ends and splits at tabs inside, and a split shifts every later
 * argument, which sqlite3 then refuses. Returns the token without its end tabs, or false.
 */
static bool unquoted_word(const char **start, const char **end)
{
	while (*start < *end && **start == '\t')
		(*start)++;
	while (*end > *start && (*end)[-1] == '\t')
		(*end)--;
	return *start < *end && !memchr(*start, '\t', *end - *start);
}

/*
 * After "[cpu]": [[:space:]]*(..... )?[[:space:]]*([0-9.]*):[[:space:]]*([^\ :]*): ending at or
 * before lat (where "latency:" starts). Sets the event's index, or -1 for another name.
 */
static bool parse_after_cpu(const char *p, const char *lat, int *ev)
{
	const char *ts, *ts_end, *name, *name_end;

	while (p < lat && is_space(*p))
		p++;
	ts = p;
	while (p < lat && (is_digit(*p) || *p == '.'))
		p++;
	ts_end = p;
	if (p >= lat || *p != ':' || !valid_timestamp(ts, ts_end))
		return false;
	p++;
	while (p < lat && is_space(*p))
		p++;
	name = p;
	while (p < lat && *p != ' ' && *p != '\\' && *p != ':')
		p++;
	name_end = p;
	if (p >= lat || *p != ':')
		return false;
	*ev = -1;
	if (!unquoted_word(&name, &name_end))
		return true;
	for (int i = 0; i < 2; i++)
		if ((size_t)(name_end - name) == strlen(fpu_events[i]) &&
		    memcmp(name, fpu_events[i], name_end - name) == 0)
			*ev = i;
	return true;
}

/* The optional five-character flags column ("d..1.") and a space, then the rest. */
static bool parse_flags(const char *p, const char *lat, int *ev)
{
	const char *ws = p;

	while (ws < lat && is_space(*ws))
		ws++;
	for (const char *q = p; q <= ws; q++)
		if (lat - q > 6 && q[5] == ' ' && parse_after_cpu(q + 6, lat, ev))
			return true;
	return parse_after_cpu(ws, lat, ev);
}

/*
 * The start: the first "[digits]" after which the rest matches, and before it (after optional
 * spaces) the task's name-pid, which the script also quotes in "" for sqlite3: it must be there
 * and hold no double quote.
 */
static bool parse_head(const char *l, const char *lat, int *ev)
{
	for (const char *b = l; b < lat; b++) {
		const char *c, *comm, *comm_end;

		b = memchr(b, '[', lat - b);
		if (!b)
			return false;
		c = b + 1;
		while (c < lat && is_digit(*c))
			c++;
		if (c == b + 1 || c >= lat || *c != ']')
			continue;
		if (!parse_flags(c + 1, lat, ev))
			continue;
		comm_end = b;
		while (comm_end > l && is_space(comm_end[-1]))
			comm_end--;
		comm = comm_end;
		while (comm > l && comm[-1] != ' ' && comm[-1] != '\\')
			comm--;
		return unquoted_word(&comm, &comm_end) && !memchr(comm, '"', comm_end - comm);
	}
	return false;
}

static struct fpu_group *fpu_group(struct fpu_log *log, int ev, uint64_t rfbm, uint64_t xinuse)
{
	struct fpu_group *g = log->last;
	size_t h;

	if (g && g->ev == ev && g->rfbm == rfbm && g->xinuse == xinuse)
		return g;
	h = (rfbm * 0x9e3779b97f4a7c15ull ^ xinuse * 0xc2b2ae3d27d4eb4full ^ (uint64_t)ev) >> 56;
	for (g = log->hash[h]; g; g = g->next)
		if (g->ev == ev && g->rfbm == rfbm && g->xinuse == xinuse)
			return log->last = g;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->ev = ev;
	g->rfbm = rfbm;
	g->xinuse = xinuse;
	g->next = log->hash[h];
	log->hash[h] = g;
	log->ngroups++;
	return log->last = g;
}

static void fpu_group_add(struct fpu_log *log, struct fpu_group *g, uint64_t v)
{
	if (v < FPU_DENSE) {
		if (!g->dense) {
			g->dense = calloc(FPU_DENSE, sizeof(*g->dense));
			if (!g->dense) {
				log->oom = 1;
				return;
			}
		}
		g->dense[v]++;
	} else {
		if (g->nbig == g->capbig) {
			size_t cap = g->capbig ? 2 * g->capbig : 64;
			uint64_t *big = realloc(g->big, cap * sizeof(*big));

			if (!big) {
				log->oom = 1;
				return;
			}
			g->big = big;
			g->capbig = cap;
		}
		g->big[g->nbig++] = v;
	}
	if (!g->n || v < g->min)
		g->min = v;
	if (!g->n || v > g->max)
		g->max = v;
	g->n++;
	g->sum += v;
}

void fpu_log_line(struct fpu_log *log, const char *l, size_t len)
{
	const char *e = l + len, *lat, *p;
	uint64_t v, rfbm, xinuse;
	struct fpu_group *g;
	int ev = -1;

	log->lines++;
	/* grep -E 'x86_fpu_latency_xsave|x86_fpu_latency_xrstor' */
	for (p = l; (p = memmem(p, e - p, "x86_fpu_latency_x", 17)); p += 17) {
		if ((e - p >= 21 && memcmp(p + 17, "save", 4) == 0) ||
		    (e - p >= 22 && memcmp(p + 17, "rstor", 5) == 0))
			break;
	}
	if (!p)
		return;
	lat = parse_tail(l, e, &v, &rfbm, &xinuse);
	if (!lat || !parse_head(l, lat, &ev) || ev < 0) {
		log->malformed++;
		return;
	}
	g = fpu_group(log, ev, rfbm, xinuse);
	if (!g) {
		log->oom = 1;
		return;
	}
	fpu_group_add(log, g, v);
	log->events++;
}

int fpu_log_read(struct fpu_log *log, int fd, volatile sig_atomic_t *stop)
{
	size_t cap = FPU_READ_SIZE, have = 0;
	char *buf = malloc(cap);
	ssize_t n;

	if (!buf)
		return -1;
	while (!*stop) {
		char *p, *nl;

		if (have == cap) { /* a line longer than the buffer */
			char *bigger = realloc(buf, cap * 2);

			if (!bigger) {
				free(buf);
				return -1;
			}
			buf = bigger;
			cap *= 2;
		}
		n = read(fd, buf + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue; /* *stop says whether to go on */
		if (n < 0) {
			free(buf);
			return -1;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		for (p = buf; (nl = memchr(p, '\n', buf + have - p)); p = nl + 1)
			fpu_log_line(log, p, nl - p);
		have -= p - buf;
		memmove(buf, p, have);
	}
	if (have) /* the last line, without its newline */
		fpu_log_line(log, buf, have);
	free(buf);
	if (log->oom) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void fpu_log_counts(const struct fpu_log *log, uint64_t *lines, uint64_t *events,
		    uint64_t *malformed)
{
	*lines = log->lines;
	*events = log->events;
	*malformed = log->malformed;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Walk the values in order once: the ranks of p50 and p99, and the sum of the n97 smallest. */
static void fpu_group_sums(struct fpu_group *g, struct fpu_sums *s)
{
	uint64_t r50, r99, seen = 0;

	s->p50 = s->p99 = 0;
	s->n = g->n;
	s->min = g->min;
	s->max = g->max;
	s->sum = g->sum;
	s->n97 = (g->n * 97 + 50) / 100; /* bc: (n * 0.97 + 0.5) / 1, scale 0 */
	s->sum97 = 0;
	r50 = (g->n + 1) / 2; /* nearest rank: ceil(n / 2) */
	r99 = (g->n * 99 + 99) / 100; /* ceil(0.99 n) */
	qsort(g->big, g->nbig, sizeof(*g->big), cmp_u64);
	for (uint64_t i = 0; i < FPU_DENSE + g->nbig && seen < g->n; i++) {
		uint64_t v = i < FPU_DENSE ? i : g->big[i - FPU_DENSE];
		uint64_t c = i < FPU_DENSE ? (g->dense ? g->dense[i] : 0) : 1;

		if (!c)
			continue;
		if (seen < r50 && seen + c >= r50)
			s->p50 = v;
		if (seen < r99 && seen + c >= r99)
			s->p99 = v;
		if (seen < s->n97)
			s->sum97 += (unsigned __int128)v * (c < s->n97 - seen ? c : s->n97 - seen);
		seen += c;
	}
}

/* sqlite3's avg() printed with 15 digits, then bc's floor(x + 0.5); exact below 10^12 samples. */
static uint64_t fpu_round_avg(unsigned __int128 sum, uint64_t n)
{
	return (uint64_t)((2 * sum + n) / (2 * (unsigned __int128)n));
}

void fpu_row_set(struct fpu_row *row, const struct fpu_sums *s)
{
	row->cnt = s->n;
	row->min = s->min;
	row->max = s->max;
	row->p50 = s->p50;
	row->p99 = s->p99;
	row->avg = fpu_round_avg(s->sum, s->n);
	row->avg97 = fpu_round_avg(s->sum97, s->n97);
}

/* A group to sort. */
struct fpu_ref {
	struct fpu_group *g;
};

/* sqlite3's GROUP BY order: event name, then RFBM and XINUSE as signed 64-bit integers. */
static int cmp_group(const void *a, const void *b)
{
	const struct fpu_group *x = ((const struct fpu_ref *)a)->g;
	const struct fpu_group *y = ((const struct fpu_ref *)b)->g;
	int c = strcmp(fpu_events[x->ev], fpu_events[y->ev]);

	if (c)
		return c;
	if (x->rfbm != y->rfbm)
		return (int64_t)x->rfbm < (int64_t)y->rfbm ? -1 : 1;
	if (x->xinuse != y->xinuse)
		return (int64_t)x->xinuse < (int64_t)y->xinuse ? -1 : 1;
	return 0;
}

struct fpu_row *fpu_log_rows(struct fpu_log *log, size_t *n)
{
	struct fpu_ref *gs = calloc(log->ngroups + 1, sizeof(*gs));
	struct fpu_row *rows = calloc(log->ngroups + 1, sizeof(*rows));
	size_t k = 0;

	if (!gs || !rows) {
		free(gs);
		free(rows);
		return NULL;
	}
	for (size_t i = 0; i < FPU_HASH; i++)
		for (struct fpu_group *g = log->hash[i]; g; g = g->next)
			gs[k++].g = g;
	qsort(gs, k, sizeof(*gs), cmp_group);
	for (size_t i = 0; i < k; i++) {
		struct fpu_sums s;

		fpu_group_sums(gs[i].g, &s);
		snprintf(rows[i].event, sizeof(rows[i].event), "%s", fpu_events[gs[i].g->ev]);
		rows[i].rfbm = gs[i].g->rfbm;
		rows[i].xinuse = gs[i].g->xinuse;
		fpu_row_set(&rows[i], &s);
	}
	free(gs);
	*n = k;
	return rows;
}
