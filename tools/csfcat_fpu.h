/* SPDX-License-Identifier: GPL-2.0 */
/*
 * csfcat fpu and fpu-report: what their files share. csfcat_fpu.c is csfcat fpu,
 * csfcat_fpu_report.c csfcat fpu-report, csfcat_fpu_compare.c its --compare;
 * csfcat_fpu_table.c prints their tables; csfcat_fpu_log.c reads trace logs (the statistics);
 * csfcat_fpu_prom.c writes csfcat fpu's table for Prometheus.
 */
#ifndef CSFCAT_FPU_H
#define CSFCAT_FPU_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One row of a latency table: an instruction (or trace event), RFBM and XINUSE. */
struct fpu_row {
	char event[32]; /* XSAVEOPT, or x86_fpu_latency_xsave */
	bool kernel; /* csfcat fpu: the instruction the kernel itself uses */
	char state[12]; /* csfcat fpu: "init" or "modified"; empty for trace logs */
	uint64_t rfbm, xinuse;
	uint64_t cnt, min, max, p50, p99;
	uint64_t avg, avg97; /* rounded as the series' script rounds: floor(x + 0.5) */
};

/* Exact statistics of n samples, from their sum, the sum of the round(0.97 n) smallest, ... */
struct fpu_sums {
	uint64_t n, min, max, p50, p99, n97;
	unsigned __int128 sum, sum97;
};

void fpu_row_set(struct fpu_row *row, const struct fpu_sums *s);

/* A table and what says where it comes from; every field may be empty in a JSON input. */
struct fpu_table {
	char kind[16]; /* "fpu" or "fpu-report" */
	char unit[8];
	char date[32];
	char source[256]; /* fpu-report: the log */
	char vendor[16], cpu_model[96], microcode[24], kernel[160];
	int64_t cpu, family, model, stepping;
	uint64_t tsc_khz;
	bool tsc_invariant;
	char xcr0[24], task[24], xfd[24], measured[24];
	char variants[96], kernel_save[12], kernel_restore[12], xrstor_format[12];
	uint64_t samples;
	uint64_t timer_p50, timer_min, timer_p99;
	bool migrated;
	/* the live-probe method measuring the kernel's save instruction (csfcat fpu) */
	bool check;
	int64_t check_error; /* when not measured */
	char check_op[12], check_rfbm[24];
	uint64_t check_n, check_p50, check_p99, check_direct_p50, check_direct_p99;
	uint64_t check_ov_p50, check_ov_p99;
	bool check_ftrace;
	/* fpu-report */
	uint64_t lines, events, malformed;
	struct fpu_row *rows;
	size_t nrows;
};

/* "0x" and v in hex, in buf. */
char *fpu_hex64(char *buf, size_t len, uint64_t v);

#define MAX_COLS 16
#define CELL 48 /* the longest: an event name (31), a space and a state (11) */

/* Fills the cells of row r (r == -1: the heads). */
typedef void (*cells_fn)(const void *ctx, long r, char c[MAX_COLS][CELL]);

/* Columns as wide as their widest cell, two spaces apart, a line of dashes under the heads. */
void fpu_print_table(int ncols, size_t nrows, cells_fn fn, const void *ctx);
/* A table's rows, as text (with a state column for csfcat fpu) and as a JSON "rows" array. */
void fpu_print_rows(const struct fpu_table *t);
void fpu_json_rows(const struct fpu_table *t);

/* csfcat fpu --prometheus: the table, in path (prom.h); 0, or -1 (said why). */
int fpu_prom_write(const char *path, const struct fpu_table *t);

/* --compare: the JSON files a and b side by side, as text or JSON; the exit status. */
int fpu_compare(const char *a, const char *b, bool json);

/* A trace log being read: its event lines grouped by (event, RFBM, XINUSE). */
struct fpu_log;

struct fpu_log *fpu_log_new(void);
void fpu_log_free(struct fpu_log *log);
/* Feed one line (without its newline). */
void fpu_log_line(struct fpu_log *log, const char *line, size_t len);
/* Feed everything fd holds, until its end or until *stop is set; -1 with errno on error. */
int fpu_log_read(struct fpu_log *log, int fd, volatile sig_atomic_t *stop);
/* Lines read, event lines counted, lines that name an event but do not parse. */
void fpu_log_counts(const struct fpu_log *log, uint64_t *lines, uint64_t *events,
		    uint64_t *malformed);
/* The rows, in the order of the series' script (event, then RFBM and XINUSE as signed). */
struct fpu_row *fpu_log_rows(struct fpu_log *log, size_t *n);

#endif /* CSFCAT_FPU_H */
